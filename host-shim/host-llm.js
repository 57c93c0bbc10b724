// @ts-check
// The host's own @deepseek-ai/dsh-llm, loaded once and shared: the agent
// loop's request marks (stall.js), its message factory (probe.js) and its
// LlmError (handing back an original failure). Absent (an older host, or a
// test without the package), each caller falls back to what it can do alone.

/** @import { Failure } from './policy-types.js' */

/** @typedef {typeof import('@deepseek-ai/dsh-llm')} HostLlm */

/** @type {Promise<HostLlm | undefined> | undefined} */
let loading;
let settled = false;
/** @type {HostLlm | undefined} */
let loaded;
/** @returns {Promise<HostLlm | undefined>} the module, or undefined when it cannot be loaded. */
export function hostLlm() {
  loading ??= import('@deepseek-ai/dsh-llm').catch(() => undefined).then((m) => {
    loaded = m;
    settled = true;
    return m;
  });
  return loading;
}

/** The module if it has loaded by now (undefined before, or when it cannot be loaded). */
export const hostLlmNow = () => loaded;

/**
 * Whether the host's agent loop marked this request (false while its package is not loaded).
 * @param {import('@deepseek-ai/dsh-llm').GenerateOptions} options - the llm.stream call.
 */
export function isAgentLoopRequest(options) {
  return typeof loaded?.isAgentLoopRequest === 'function' && loaded.isAgentLoopRequest(options);
}

/**
 * An `llm/stream` listener that reads the host's package synchronously
 * (hostLlmNow). The import starts here and `apply` does not wait for it: the
 * host's boot awaits every plugin's `apply` before the first turn, and the
 * import took 60-100 ms there (the package's own graph, which the host loads
 * anyway for its llm service, only later). A stream opened before the import
 * has settled waits for it inside the stream this returns, so no call ever
 * sees it missing.
 * @param {(options: any, next: () => any) => any} listener - returns the stream (an async iterable).
 * @returns {(options: any, next: () => any) => any}
 */
export function afterHostLlm(listener) {
  const ready = hostLlm();
  return (options, next) => (settled ? listener(options, next) : late(ready, () => listener(options, next)));
}

/**
 * @param {Promise<unknown>} ready
 * @param {() => AsyncIterable<unknown>} open
 */
async function* late(ready, open) {
  await ready;
  yield* open();
}

/**
 * The host's LlmError carrying `failure` (a WIT `failure`): thrown from the
 * agent/request-error waterfall, it ends the turn with that failure, because
 * the loop reports an LlmError's own failure (and any other error as UNKNOWN).
 * Undefined when the host's class is not available.
 * @param {Failure} failure
 */
export async function hostFailure(failure) {
  const LlmError = (await hostLlm())?.LlmError;
  if (typeof LlmError !== 'function') return undefined;
  /** @type {{status?: number, providerRetryAfterMs?: number}} */
  const options = {};
  const { status, providerRetryAfterMs } = /** @type {{status?: number, providerRetryAfterMs?: number}} */ (failure); // null fails each test below
  if (Number.isInteger(status) && /** @type {number} */ (status) >= 100 && /** @type {number} */ (status) <= 599) options.status = status;
  if (/** @type {number} */ (providerRetryAfterMs) > 0) options.providerRetryAfterMs = providerRetryAfterMs;
  return new LlmError(failure.message || failure.code, failure.code, options);
}
