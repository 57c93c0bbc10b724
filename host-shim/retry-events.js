// @ts-check
// While dsh-resilience holds a turn in a wait, the session says so in the
// host's own vocabulary: `llm/retry` before the wait and `llm/retry-started`
// after it, the events dsh-llm-retry writes. They are host-known types (the
// session stays loadable) and the stock UI already shows them. The policyKey
// is the plugin's own, so dsh-llm-retry never counts these against its budget.

export const POLICY_KEY = JSON.stringify(['dsh-resilience']);

/** Appends llm/retry; returns the retry id to close it with. */
export function appendRetry(payload, effect, delayMs) {
  const retryId = `dsh-resilience:${payload.agent.id}:${payload.turn}:${payload.step}`;
  const f = payload.failure ?? {};
  const failure = { code: String(f.code ?? 'UNKNOWN'), message: String(f.message ?? '') };
  if (Number.isInteger(f.status)) failure.status = f.status;
  if (Number.isFinite(f.providerRetryAfterMs)) failure.providerRetryAfterMs = f.providerRetryAfterMs;
  payload.agent.session.append('llm/retry', {
    retryId, turn: payload.turn, step: payload.step, provider: effect?.channel?.provider ?? payload.provider,
    mode: 'always', policyKey: POLICY_KEY, retry: effect?.attempt ?? 1, delayMs, failure,
  });
  return retryId;
}

export function appendRetryStarted(payload, retryId, retry) {
  payload.agent.session.append('llm/retry-started', { retryId, turn: payload.turn, step: payload.step, retry });
}
