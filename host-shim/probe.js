// @ts-check
// A probe: one tiny real request to a channel whose open time is up, sent
// through the host's own llm service (so the route's adapter, credentials and
// stream watchdogs apply) and not through any agent (so no turn pays for it).

import { hostLlm } from './host-llm.js';
import { probeResultEvent } from './events.js';

/** @import { Channel, EventProbeResult, Failure } from './policy-types.js' */

/** The default of the row's probeMaxTokens (the module validates the key and resolves it). */
export const PROBE_MAX_TOKENS = 8;
export const PROBE_TIMEOUT_MS = 30_000;

/**
 * The host's createUserMessage; a plain message if unavailable.
 * @param {string} text
 */
async function userMessage(text) {
  const create = (await hostLlm())?.createUserMessage;
  const content = [{ type: /** @type {const} */ ('text'), text }];
  return create ? create({ content, source: { kind: 'plugin', plugin: 'dsh-resilience' } }) : { role: 'user', content };
}

/**
 * Sends the probe and settles it into a WIT `probe-result` event.
 * @param {any} llm - the host's llm service.
 * @param {Channel} channel
 * @param {AbortSignal} lifetime - the plugin's lifetime: dispose ends the probe.
 * @param {number} [maxTokens] - the resolved config's probeMaxTokens.
 * @returns {Promise<EventProbeResult>}
 */
export async function runProbe(llm, channel, lifetime, maxTokens = PROBE_MAX_TOKENS) {
  const signal = AbortSignal.any([lifetime, AbortSignal.timeout(PROBE_TIMEOUT_MS)]);
  /** @type {(failure: Failure | undefined) => EventProbeResult} */
  const result = (failure) => probeResultEvent(channel, failure);
  try {
    const messages = [await userMessage('Reply with OK.')];
    let finish;
    for await (const chunk of llm.stream({ ...channel, messages, maxTokens, signal })) {
      if (chunk.type === 'finish') finish = chunk.reason;
    }
    if (finish?.kind === 'error' || finish?.kind === 'aborted') return result(plainFailure(finish.failure, signal));
    return result(undefined);
  } catch (e) {
    return result(plainFailure(e?.failure ?? { code: e?.code, message: e?.message }, signal));
  }
}

/**
 * @param {any} f - the host's failure, or what an exception carried.
 * @param {AbortSignal} signal
 * @returns {Failure}
 */
function plainFailure(f, signal) {
  // A probe ended by dispose is a cancel (permanent: says nothing of the
  // channel); one ended by its own deadline is a timeout like any other.
  if (signal.aborted) {
    const timedOut = signal.reason?.name === 'TimeoutError';
    return { code: timedOut ? 'TIMEOUT' : 'ABORTED', message: timedOut ? 'probe got no answer in time' : 'probe cancelled' };
  }
  /** @type {Failure} */
  const out = { code: typeof f?.code === 'string' && f.code ? f.code : 'UNKNOWN' };
  if (typeof f?.message === 'string') out.message = f.message.slice(0, 2000);
  if (Number.isInteger(f?.status)) out.status = f.status;
  if (Number.isFinite(f?.providerRetryAfterMs) && f.providerRetryAfterMs >= 0) out.providerRetryAfterMs = Math.round(f.providerRetryAfterMs);
  return out;
}
