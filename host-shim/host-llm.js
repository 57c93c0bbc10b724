// @ts-check
// The host's own @deepseek-ai/dsh-llm, loaded once and shared: the agent
// loop's request marks (stall.js), its message factory (probe.js) and its
// LlmError (handing back an original failure). Absent (an older host, or a
// test without the package), each caller falls back to what it can do alone.

let loading;
/** @returns {Promise<object|undefined>} the module, or undefined when it cannot be loaded. */
export function hostLlm() {
  loading ??= import('@deepseek-ai/dsh-llm').catch(() => undefined);
  return loading;
}

/**
 * The host's LlmError carrying `failure` (a WIT `failure`): thrown from the
 * agent/request-error waterfall, it ends the turn with that failure, because
 * the loop reports an LlmError's own failure (and any other error as UNKNOWN).
 * Undefined when the host's class is not available.
 */
export async function hostFailure(failure) {
  const LlmError = (await hostLlm())?.LlmError;
  if (typeof LlmError !== 'function') return undefined;
  const options = {};
  if (Number.isInteger(failure.status) && failure.status >= 100 && failure.status <= 599) options.status = failure.status;
  if (failure.providerRetryAfterMs > 0) options.providerRetryAfterMs = failure.providerRetryAfterMs;
  return new LlmError(failure.message || failure.code, failure.code, options);
}
