// The one place host payloads become policy events (wit/policy.wit `event`).
// Host codes pass through as they are: classifying them is the policy's job.

const MAX_MESSAGE = 2000; // enough for any classifier wording; never the prompt

const agentId = (agent) => String(agent?.id ?? 'unknown');
const channelOf = (config) => ({ provider: String(config?.provider ?? ''), model: String(config?.model ?? '') });

/** `agent/request` after `next()`: the host's proposed call config. */
export function requestEvent(payload, proposed) {
  const ev = { kind: 'request', agent: agentId(payload.agent), proposed: channelOf(proposed) };
  if (typeof proposed?.reasoningEffort === 'string') ev.reasoningEffort = proposed.reasoningEffort;
  return ev;
}

/** `agent/request-error`, asked before or after the host's retry plugin. */
export function requestErrorEvent(payload, phase, rand) {
  const ev = {
    kind: 'request-error',
    agent: agentId(payload.agent),
    provider: String(payload.provider ?? ''),
    failure: failureOf(payload.failure),
    phase,
    rand,
  };
  const hostRetry = hostRetryOf(payload.retryPolicy);
  if (hostRetry) ev.hostRetry = hostRetry;
  return ev;
}

export const settledEvent = (agent) => ({ kind: 'settled', agent: agentId(agent) });
export const disposedEvent = (agent) => ({ kind: 'disposed', agent: agentId(agent) });

const whole = (x, max) => (Number.isFinite(x) && x >= 0 ? Math.min(Math.round(x), max) : undefined);

/** The host's LlmFailure, cut to what the contract carries. */
export function failureOf(f) {
  const out = { code: typeof f?.code === 'string' && f.code ? f.code : 'UNKNOWN' };
  if (typeof f?.message === 'string') out.message = f.message.slice(0, MAX_MESSAGE);
  const status = whole(f?.status, 999);
  if (status !== undefined) out.status = status;
  const retryAfter = whole(f?.providerRetryAfterMs, 2 ** 53);
  if (retryAfter !== undefined) out.providerRetryAfterMs = retryAfter;
  return out;
}

/** dsh-llm-retry's resolved policy for the failing route, if any. */
export function hostRetryOf(p) {
  if (!p || typeof p.mode !== 'string') return undefined;
  const out = { mode: p.mode, retryableCodes: Array.isArray(p.retryableCodes) ? p.retryableCodes.map(String) : [] };
  const max = whole(p.maxRetries, 2 ** 31 - 1);
  if (max !== undefined) out.maxRetries = max;
  return out;
}
