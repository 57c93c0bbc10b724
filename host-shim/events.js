// @ts-check
// The one place host payloads and shell facts become policy events
// (wit/policy.wit `event`): a field the contract adds or renames is changed
// here only. Host codes pass through as they are: classifying them is the
// policy's job.

/** @import { Channel, EventBalanceReading, EventDisposed, EventHedgeResult, EventModelInfo, EventProbeResult, EventRequest, EventRequestError, EventRestoreRoute, EventSetBackup, EventSetPool, EventSetQuota, EventSettled, EventStreamCheck, EventToolResult, EventWake, Failure, HostRetryPolicy, Phase, QuotaSwitch, ToolFailure } from './policy-types.js' */

const MAX_MESSAGE = 2000; // enough for any classifier wording; never the prompt or a tool's output

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

// ---- the shell's own facts: timers, probes, settings, model info

/** @type {() => EventWake} - a timer the module asked for came due (or: look again now). */
export const wakeEvent = () => ({ kind: 'wake' });

/**
 * A probe's outcome; no failure means it answered.
 * @param {Channel} channel
 * @param {Failure} [failure]
 * @returns {EventProbeResult}
 */
export const probeResultEvent = (channel, failure) => (failure ? { kind: 'probe-result', channel, ok: false, failure } : { kind: 'probe-result', channel, ok: true });

/**
 * The user's backup channel; none clears it.
 * @param {Channel} [channel]
 * @returns {EventSetBackup}
 */
export const setBackupEvent = (channel) => (channel ? { kind: 'set-backup', channel } : { kind: 'set-backup' });

/**
 * What the host knows of a channel's model: its efforts and context window,
 * or that it cannot serve it (and why).
 * @param {Channel} channel
 * @param {{efforts?: string[], contextWindow?: unknown, error?: any}} o - `error`: the host's refusal;
 *   `contextWindow`: the host's declared window, kept only when a positive integer.
 * @returns {EventModelInfo}
 */
export function modelInfoEvent(channel, { efforts = [], contextWindow, error } = {}) {
  if (error === undefined) {
    const w = Number.isSafeInteger(contextWindow) && /** @type {number} */ (contextWindow) > 0 ? { contextWindow: /** @type {number} */ (contextWindow) } : {};
    return { kind: 'model-info', channel, known: true, efforts, ...w };
  }
  return { kind: 'model-info', channel, known: false, efforts: [], ...(typeof error?.code === 'string' && error.code ? { code: error.code } : {}) };
}

/**
 * A balance script's reading as the module read its output (WIT
 * `balance-output`'s `reading`), as the event it decides with.
 * @param {import('./policy-types.js').BalanceReadingEvent} r
 * @returns {EventBalanceReading}
 */
export const balanceReadingEvent = (r) => ({
  kind: 'balance-reading', provider: r.provider, ok: r.ok,
  ...(r.ok && typeof r.remaining === 'number' ? { remaining: r.remaining } : {}),
  ...(r.ok && typeof r.resetsAtMs === 'number' ? { resetsAtMs: r.resetsAtMs } : {}),
});

/**
 * A missing reading; `why` is for the audit log and is stripped before the module sees it.
 * @param {string} provider
 * @param {string} why
 * @returns {EventBalanceReading & {why: string}}
 */
export const missingReadingEvent = (provider, why) => ({ kind: 'balance-reading', provider, ok: false, why });

/**
 * A session's quota switch, as the user set it (on, off, default: the module
 * refuses anything else, naming the field).
 * @param {string} agent
 * @param {string} mode
 * @param {boolean} [inherited] - the session's ancestor's setting, taken as a snapshot
 * @returns {EventSetQuota}
 */
export const setQuotaEvent = (agent, mode, inherited) => ({ kind: 'set-quota', agent, mode: /** @type {QuotaSwitch} */ (mode), ...(inherited ? { inherited } : {}) });

/**
 * A session's pool: a pool's name, `off` or `default`.
 * @param {string} agent
 * @param {string} pool
 * @param {boolean} [inherited] - the session's ancestor's setting, taken as a snapshot
 * @returns {EventSetPool}
 */
export const setPoolEvent = (agent, pool, inherited) => ({
  ...(pool === 'off' || pool === 'default' ? { kind: 'set-pool', agent, mode: pool } : { kind: 'set-pool', agent, mode: 'pool', pool }),
  ...(inherited ? { inherited } : {}),
});

/**
 * A session's persisted home and pick, handed back before its first request.
 * @param {string} agent
 * @param {{home?: Channel, pick?: Channel}} route
 * @returns {EventRestoreRoute}
 */
export const restoreRouteEvent = (agent, { home, pick }) => ({ kind: 'restore-route', agent, ...(home ? { home } : {}), ...(pick ? { pick } : {}) });

// ---- host payloads on the stream and tool paths

/**
 * The `aux-request` event (WIT) of a compaction or session-title call: asks
 * where it may go, changing no state (policy/aux.go).
 * @param {{provider: unknown, model: unknown, purpose?: unknown, reasoningEffort?: unknown}} options - the llm.stream call.
 */
export function auxRequestEvent(options) {
  /** @type {{kind: 'aux-request', proposed: {provider: string, model: string}, purpose: any, reasoningEffort?: string}} */
  const event = { kind: 'aux-request', proposed: { provider: String(options.provider), model: String(options.model) }, purpose: options.purpose };
  if (typeof options.reasoningEffort === 'string') event.reasoningEffort = options.reasoningEffort;
  return event;
}

/**
 * The `stream-check` event (wit/policy.wit) of one watched call. Its times
 * are taken on the monotonic clock and expressed on the wall clock of this
 * moment, so a wall clock that jumps never turns into silence.
 * @param {{openedAt: number, chunks: number, lastChunkAt: number, firstTokenMs?: number, hedged?: boolean}} call
 * @param {{provider?: unknown, model?: unknown, purpose?: unknown, signal?: AbortSignal, sessionId?: unknown, reasoningEffort?: unknown}} options
 * @param {number} wall
 * @param {number} mono
 * @returns {EventStreamCheck}
 */
export function streamCheckEvent(call, options, wall, mono) {
  /** @param {number} t */
  const at = (t) => Math.max(0, Math.round(wall - (mono - t)));
  /** @type {EventStreamCheck} */
  const ev = {
    kind: 'stream-check',
    channel: { provider: String(options.provider ?? ''), model: String(options.model ?? '') },
    openedMs: at(call.openedAt),
    chunks: call.chunks,
    cancelled: options.signal?.aborted === true,
  };
  if (typeof options.purpose === 'string') ev.purpose = options.purpose;
  if (call.chunks > 0) ev.lastChunkMs = at(call.lastChunkAt);
  // The check at the first chunk carries its time: the slow-call breaker's
  // sample (policy/slow.go), on the same clocks as the stall bounds.
  if (call.firstTokenMs !== undefined) ev.firstTokenMs = Math.max(0, Math.round(call.firstTokenMs));
  // What a hedge needs (policy/hedge.go): the agent loop's session and effort.
  if (typeof options.purpose !== 'string' && typeof options.sessionId === 'string') ev.agent = options.sessionId;
  if (typeof options.reasoningEffort === 'string') ev.reasoningEffort = options.reasoningEffort;
  if (call.hedged) ev.hedging = true;
  return ev;
}

/**
 * The `hedge-result` event (wit/policy.wit): a hedge race ended. Times as
 * streamCheckEvent's: monotonic, on the wall clock of this moment.
 * @param {{openedAt: number}} call
 * @param {{sessionId?: unknown}} options
 * @param {'primary' | 'hedge' | 'none'} winner
 * @param {number | undefined} firstTokenMs - the winner's, from its own start
 * @param {string | undefined} end - with none: why
 * @param {unknown} code - the hedge's failure code, with hedge-failed
 * @param {number} wall
 * @param {number} mono
 * @returns {EventHedgeResult}
 */
export function hedgeResultEvent(call, options, winner, firstTokenMs, end, code, wall, mono) {
  /** @type {EventHedgeResult} */
  const ev = { kind: 'hedge-result', agent: String(options.sessionId ?? ''), winner, openedMs: Math.max(0, Math.round(wall - (mono - call.openedAt))) };
  if (firstTokenMs !== undefined) ev.firstTokenMs = Math.max(0, Math.round(firstTokenMs));
  if (end) ev.end = end;
  if (typeof code === 'string' && code) ev.code = code;
  return ev;
}

/**
 * The policy event for one finished attempt (WIT `tool-result-event`).
 * @param {any} exec - the host's tool execution.
 * @param {any} result - the attempt's result.
 * @param {number} attempt
 * @param {number} rand
 * @param {number | undefined} timeoutMs
 * @returns {EventToolResult}
 */
export function toolResultEvent(exec, result, attempt, rand, timeoutMs) {
  /** @type {EventToolResult} */
  const ev = { kind: 'tool-result', call: String(exec?.callId ?? ''), tool: String(exec?.name ?? ''), attempt, rand };
  const agent = exec?.agent?.id;
  if (agent !== undefined && agent !== null) ev.agent = String(agent);
  if (result?.isError === true) {
    /** @type {ToolFailure} */
    const failure = { message: String(result.error?.message ?? firstText(result.content) ?? '').slice(0, MAX_MESSAGE) };
    const code = result.error?.info?.code;
    if (typeof code === 'string' && code) failure.code = code;
    ev.failure = failure;
  }
  if (timeoutMs !== undefined && Number.isSafeInteger(timeoutMs) && timeoutMs > 0) ev.timeoutMs = timeoutMs;
  return ev;
}

/** @param {unknown} content - a tool result's content blocks */
const firstText = (content) => (Array.isArray(content) ? content.find((b) => b?.type === 'text')?.text : undefined);
