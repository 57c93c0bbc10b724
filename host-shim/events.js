// @ts-check
// The one place host payloads become policy events (wit/policy.wit `event`).
// Host codes pass through as they are: classifying them is the policy's job.

/** @import { EventDisposed, EventRequest, EventRequestError, EventSettled, Failure, HostRetryPolicy, Phase } from './policy-types.js' */

const MAX_MESSAGE = 2000; // enough for any classifier wording; never the prompt

/** @param {{id?: unknown} | undefined} agent */
const agentId = (agent) => String(agent?.id ?? 'unknown');
/** @param {{provider?: unknown, model?: unknown} | undefined} config */
const channelOf = (config) => ({ provider: String(config?.provider ?? ''), model: String(config?.model ?? '') });

/**
 * `agent/request` after `next()`: the host's proposed call config, and the
 * request's context as the host measures it (`contextTokens`, its token
 * meter's estimate; left out when unknown).
 * @param {{agent?: {id?: unknown}}} payload
 * @param {{provider?: unknown, model?: unknown, reasoningEffort?: unknown} | undefined} proposed
 * @param {unknown} [contextTokens]
 * @returns {EventRequest}
 */
export function requestEvent(payload, proposed, contextTokens) {
  /** @type {EventRequest} */
  const ev = { kind: 'request', agent: agentId(payload.agent), proposed: channelOf(proposed) };
  if (typeof proposed?.reasoningEffort === 'string') ev.reasoningEffort = proposed.reasoningEffort;
  const tokens = whole(contextTokens, 2 ** 53 - 1);
  if (tokens) ev.contextTokens = tokens;
  return ev;
}

/**
 * The context the agent's next request carries, as the host's own token
 * meter measures it (the figure its compaction acts on): undefined when the
 * host has no meter or the measure fails. Measuring replays the session's
 * new events only (the meter keeps a fold per session).
 * @param {{get?(name: string): any}} ctx
 * @param {any} agent
 * @returns {number | undefined}
 */
export function contextTokensOf(ctx, agent) {
  try {
    const meter = ctx.get?.('tokenMeter');
    const session = agent?.session;
    if (!meter || !session) return undefined;
    const n = meter.measure(session)?.totalTokens;
    return Number.isFinite(n) && n > 0 ? n : undefined;
  } catch {
    return undefined; // no measure: the request routes as if its size were unknown
  }
}

/**
 * `agent/request-error`, asked before or after the host's retry plugin.
 * @param {{agent?: {id?: unknown}, provider?: unknown, failure?: unknown, retryPolicy?: unknown}} payload
 * @param {Phase} phase
 * @param {number} rand
 * @returns {EventRequestError}
 */
export function requestErrorEvent(payload, phase, rand) {
  /** @type {EventRequestError} */
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

/** @type {(agent: {id?: unknown} | undefined) => EventSettled} */
export const settledEvent = (agent) => ({ kind: 'settled', agent: agentId(agent) });
/** @type {(agent: {id?: unknown} | undefined) => EventDisposed} */
export const disposedEvent = (agent) => ({ kind: 'disposed', agent: agentId(agent) });

/** @type {(x: any, max: number) => number | undefined} */
const whole = (x, max) => (Number.isFinite(x) && x >= 0 ? Math.min(Math.round(x), max) : undefined);

/**
 * The host's LlmFailure, cut to what the contract carries.
 * @param {any} f - whatever the host handed over: every field is checked.
 * @returns {Failure}
 */
export function failureOf(f) {
  /** @type {Failure} */
  const out = { code: typeof f?.code === 'string' && f.code ? f.code : 'UNKNOWN' };
  if (typeof f?.message === 'string') out.message = f.message.slice(0, MAX_MESSAGE);
  const status = whole(f?.status, 999);
  if (status !== undefined) out.status = status;
  const retryAfter = whole(f?.providerRetryAfterMs, 2 ** 53);
  if (retryAfter !== undefined) out.providerRetryAfterMs = retryAfter;
  return out;
}

/**
 * dsh-llm-retry's resolved policy for the failing route, if any.
 * @param {any} p
 * @returns {HostRetryPolicy | undefined}
 */
export function hostRetryOf(p) {
  if (!p || typeof p.mode !== 'string') return undefined;
  /** @type {HostRetryPolicy} */
  const out = { mode: p.mode, retryableCodes: Array.isArray(p.retryableCodes) ? p.retryableCodes.map(String) : [] };
  const max = whole(p.maxRetries, 2 ** 31 - 1);
  if (max !== undefined) out.maxRetries = max;
  return out;
}
