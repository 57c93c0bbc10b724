// @ts-check
// While dsh-resilience holds a turn in a wait, the session says so in the
// host's own vocabulary: `llm/retry` before the wait and `llm/retry-started`
// after it, the events dsh-llm-retry writes. They are host-known types (the
// session stays loadable) and the stock UI already shows them. The policyKey
// is the plugin's own, so dsh-llm-retry never counts these against its budget.

/** @import { LlmRetryEventData, LlmRetryStartedEventData, RetryId } from '@deepseek-ai/dsh-llm-retry' */
/** @import { Channel } from './policy-types.js' */
/** @import { RequestErrorPayload } from './requests.js' */

export const POLICY_KEY = JSON.stringify(['dsh-resilience']);

/**
 * The session, to append dsh-llm-retry's events to: the host declares them
 * for `@deepseek-ai/dsh-session/types`, a path the checker does not resolve
 * here, so the data is typed by their declarations and the call by name.
 * @param {RequestErrorPayload} payload
 */
const session = (payload) => /** @type {{append(type: string, data: object): unknown}} */ (/** @type {unknown} */ (payload.agent.session));

/**
 * Appends llm/retry; returns the retry id to close it with.
 * @param {RequestErrorPayload} payload
 * @param {{channel?: Channel, attempt?: number} | undefined} effect - the retry (or spill) the wait is for.
 * @param {number} delayMs
 * @param {(f: {code: string, message: string}) => {code: string, message: string}} redact - the
 *   module's redaction (engine.redactFailure): the session file never holds a credential the provider echoed.
 * @returns {RetryId}
 */
export function appendRetry(payload, effect, delayMs, redact) {
  const retryId = /** @type {RetryId} */ (`dsh-resilience:${payload.agent.id}:${payload.turn}:${payload.step}`);
  /** @type {Partial<RequestErrorPayload['failure']>} */
  const f = payload.failure ?? {};
  /** @type {{code: string, message: string, status?: number, providerRetryAfterMs?: number}} */
  const failure = redact({ code: String(f.code ?? 'UNKNOWN'), message: String(f.message ?? '') });
  if (Number.isInteger(f.status)) failure.status = f.status;
  if (Number.isFinite(f.providerRetryAfterMs)) failure.providerRetryAfterMs = f.providerRetryAfterMs;
  /** @type {LlmRetryEventData} */
  const data = {
    retryId, turn: payload.turn, step: payload.step, provider: effect?.channel?.provider ?? payload.provider,
    mode: 'always', policyKey: POLICY_KEY, retry: effect?.attempt ?? 1, delayMs, failure,
  };
  session(payload).append('llm/retry', data);
  return retryId;
}

/**
 * Appends llm/retry-started: the wait is over, the next attempt goes.
 * @param {RequestErrorPayload} payload
 * @param {RetryId} retryId - appendRetry's
 * @param {number} retry - the attempt's number
 */
export function appendRetryStarted(payload, retryId, retry) {
  /** @type {LlmRetryStartedEventData} */
  const data = { retryId, turn: payload.turn, step: payload.step, retry };
  session(payload).append('llm/retry-started', data);
}
