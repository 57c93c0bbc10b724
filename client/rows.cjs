// @ts-check
// The inline rows, from host-known session events only: the plugin writes no
// session event of its own (an unknown type makes a session unloadable), so a
// row is read back from what the host logs anyway, with the plugin's audit
// records adding the details (class, breaker, reason).
//
//   failover: a `request/header` with reason `change` after a failed request
//             in the same step (a user's model switch has no failure before it);
//   return:   a `change` back to the channel the session last failed over
//             from, confirmed by the audit's `return` record;
//   give-up:  a turn that ended in an error, confirmed by a `give-up` record;
//   hedge:    a request (its `request/header` up to its finish chunk) the
//             plugin's audit holds a `hedge` record for: the host logs
//             nothing of a hedge (the race is inside the stream wrapper and
//             the winner's chunks are the request's), so the record is the
//             row's only evidence, and a request without one shows nothing.
//
// These functions are pure and total: the conversation definitions call them
// for every event of every session, and a throw there would make the
// session's history unreadable in the browser.
'use strict';

const { translate, translateOr } = require('./i18n.cjs');

/**
 * @import { Channel } from '../host-shim/policy-types.js'
 * @import { AuditRecord } from '../host-shim/web-rpc.js'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * A host session event, as far as the rows read it. Every event of every
 * session comes here, so each field is checked before it is used.
 * @typedef {object} SessionEvent
 * @property {string} type
 * @property {number} seq
 * @property {number} time - epoch ms
 * @property {EventData} [data]
 */

/**
 * The parts of an event's data the rows read, by event type.
 * @typedef {object} EventData
 * @property {{config?: {provider?: string, model?: string}}} [header] - `request/header`
 * @property {string | {kind?: string, error?: {code?: unknown}}} [reason] - `request/header`: why
 *   this route (`change`, ...); `turn/end`: how the turn ended
 * @property {{type?: string, reason?: {kind?: string, failure?: {code?: unknown, status?: unknown}}}} [chunk] - `assistant/chunk`
 * @property {number} [turn]
 * @property {number} [step]
 */

/**
 * Where the engine places an event (the conversation runtime's location).
 * @typedef {{kind: string, turn?: {turn: number}, step?: {step: number}}} EngineLocation
 */

/**
 * A failure node's state.
 * @typedef {object} FailureState
 * @property {number} seq
 * @property {number} time
 * @property {string} code
 * @property {number | undefined} status
 * @property {string} where - `turn:step`
 * @property {number} count - failures in a row on this route in this step
 * @property {string | undefined} route
 */

/**
 * A route node's state: one per `request/header`, with the row it makes, if any.
 * @typedef {object} RouteState
 * @property {number} seq
 * @property {number} time
 * @property {string} route
 * @property {unknown} reason
 * @property {string | undefined} from
 * @property {string | undefined} home - the channel a failover left, until it returns
 * @property {'failover' | 'return' | null} kind
 * @property {string | undefined} code
 * @property {number | undefined} status
 * @property {number | undefined} count
 */

/**
 * A give-up candidate's state: a turn that ended in an error.
 * @typedef {object} TurnEndState
 * @property {number} seq
 * @property {number} time
 * @property {string} code
 * @property {number | undefined} turn
 * @property {string | undefined} route
 * @property {number | undefined} failureTime
 */

/**
 * A hedge candidate's state: one request, from its header to its finish chunk.
 * @typedef {object} HedgeState
 * @property {number} seq - the header's: the row stands where the request went out
 * @property {number} time - the header's
 * @property {number} end - the finish chunk's time
 * @property {string} route - the channel the request went out on (a hedge's `from`)
 */

/** @typedef {'failover' | 'return' | 'give-up' | 'hedge'} RowKind */

/**
 * What a row reads of its node's state (a RouteState or a TurnEndState).
 * @typedef {object} RowState
 * @property {number} seq
 * @property {number} time
 * @property {string} [route]
 * @property {string} [from]
 * @property {string} [code]
 * @property {number} [status]
 * @property {number} [count]
 * @property {number} [failureTime]
 * @property {number} [end]
 */

/**
 * A channel a give-up record says was tried: what the host sends is
 * {channel, code} (web-rpc.d.ts Tried); triedList also takes a bare channel
 * or one with a count, and skips anything else.
 * @typedef {string | {channel?: string | Channel, code?: unknown, count?: number, attempts?: number} | null | undefined} TriedEntry
 */

/**
 * A detail line of a row: its label and value (a list shows one item a line).
 * @typedef {[string, string | string[] | undefined]} Detail
 */

/**
 * @typedef {object} RowView
 * @property {RowKind} kind
 * @property {string} text
 * @property {Detail[]} details
 */

/**
 * `provider/model` of a `request/header`, or undefined.
 * @param {SessionEvent | undefined} event
 */
function routeOf(event) {
  const cfg = event && event.type === 'request/header' ? event.data && event.data.header && event.data.header.config : undefined;
  return cfg && cfg.provider && cfg.model ? `${cfg.provider}/${cfg.model}` : undefined;
}

/**
 * The failure of an error finish chunk, or undefined.
 * @param {SessionEvent | undefined} event
 */
function failureOf(event) {
  if (!event || event.type !== 'assistant/chunk') return undefined;
  const d = event.data || {};
  const chunk = d.chunk;
  if (!chunk || chunk.type !== 'finish' || !chunk.reason || chunk.reason.kind !== 'error') return undefined;
  const f = chunk.reason.failure || {};
  return { code: String(f.code || 'UNKNOWN'), status: typeof f.status === 'number' ? f.status : undefined, where: `${d.turn}:${d.step}` };
}

/**
 * The error a turn ended with, or undefined.
 * @param {SessionEvent | undefined} event
 */
function turnErrorOf(event) {
  if (!event || event.type !== 'turn/end') return undefined;
  const d = event.data || {};
  const r = d.reason;
  if (!r || typeof r !== 'object' || r.kind !== 'error') return undefined;
  return { code: String((r.error && r.error.code) || 'UNKNOWN'), turn: d.turn };
}

/**
 * State of a failure node: the failure, and how many there were in a row on
 * this route in this step (the `×3` of the row).
 * @param {SessionEvent} event
 * @param {FailureState | undefined} prevFailure - the previous failure node's state, if any.
 * @param {RouteState | undefined} prevRoute - the latest route node's state, if any.
 * @returns {FailureState | undefined}
 */
function failureState(event, prevFailure, prevRoute) {
  const f = failureOf(event);
  if (!f) return undefined;
  const sameRun = prevFailure && prevFailure.where === f.where && (!prevRoute || prevFailure.seq > prevRoute.seq);
  return { seq: event.seq, time: event.time, code: f.code, status: f.status, where: f.where, count: sameRun ? prevFailure.count + 1 : 1, route: prevRoute ? prevRoute.route : undefined };
}

/**
 * State of a route node (one per `request/header`), and what row it makes.
 * @param {SessionEvent} event
 * @param {string | undefined} where - `turn:step` of the header (from the engine's location), if known.
 * @param {RouteState | undefined} prevRoute - the previous route node's state (undefined at the start
 *   of the history the browser loaded: then `from` is unknown).
 * @param {FailureState | undefined} lastFailure - the latest failure node's state.
 * @returns {RouteState | undefined}
 */
function routeState(event, where, prevRoute, lastFailure) {
  const route = routeOf(event);
  if (!route) return undefined;
  const reason = event.data && event.data.reason;
  if (where === undefined && lastFailure) where = lastFailure.where; // no location: the latest failure's step
  const from = prevRoute ? prevRoute.route : undefined;
  const failedHere = !!lastFailure && (!prevRoute || lastFailure.seq > prevRoute.seq) && lastFailure.where === where;
  /** @type {RouteState['kind']} */
  let kind = null;
  if (reason === 'change' && from !== route) {
    if (failedHere) kind = 'failover';
    else if (prevRoute && prevRoute.home && prevRoute.home === route) kind = 'return';
  }
  const home = kind === 'failover' ? (prevRoute && prevRoute.home) || from : kind === 'return' ? undefined : prevRoute && prevRoute.home;
  return {
    seq: event.seq, time: event.time, route, reason, from, home, kind,
    code: failedHere ? lastFailure.code : undefined,
    status: failedHere ? lastFailure.status : undefined,
    count: failedHere ? lastFailure.count : undefined,
  };
}

/**
 * `turn:step` of an engine location (a header carries no turn or step of its own).
 * @param {EngineLocation | undefined} location
 */
function whereOf(location) {
  return location && location.kind === 'step' && location.turn && location.step ? `${location.turn.turn}:${location.step.step}` : undefined;
}

/**
 * State of a give-up candidate: a turn that ended in an error.
 * @param {SessionEvent} event
 * @param {FailureState | undefined} lastFailure
 * @param {RouteState | undefined} lastRoute
 * @returns {TurnEndState | undefined}
 */
function turnEndState(event, lastFailure, lastRoute) {
  const err = turnErrorOf(event);
  if (!err) return undefined;
  return {
    seq: event.seq, time: event.time, code: err.code, turn: err.turn,
    route: lastRoute ? lastRoute.route : undefined,
    failureTime: lastFailure && lastFailure.where && lastFailure.where.split(':')[0] === String(err.turn) ? lastFailure.time : undefined,
  };
}

/**
 * Whether an event is a request's finish chunk (any reason: an answer, an
 * error, a cut), with its time.
 * @param {SessionEvent | undefined} event
 */
function isFinish(event) {
  if (!event || event.type !== 'assistant/chunk') return false;
  const chunk = event.data && event.data.chunk;
  return !!chunk && chunk.type === 'finish' && typeof event.time === 'number';
}

/**
 * State of a hedge candidate: the request a finish chunk ends (the latest
 * header before it). Undefined when the history loaded has no header before it.
 * @param {SessionEvent} event
 * @param {RouteState | undefined} lastRoute
 * @returns {HedgeState | undefined}
 */
function hedgeState(event, lastRoute) {
  if (!isFinish(event) || !lastRoute || typeof lastRoute.route !== 'string') return undefined;
  return { seq: lastRoute.seq, time: lastRoute.time, end: event.time, route: lastRoute.route };
}

const MATCH_BEFORE_MS = 120000; // a failover record precedes its header by the waits in between
const MATCH_SLACK_MS = 2000;

/**
 * The audit record behind a row, if any (records: the host's `rows` answer).
 * @param {RowKind} kind
 * @param {RowState} state
 * @param {AuditRecord[] | undefined} records
 */
function matchRecord(kind, state, records) {
  const list = Array.isArray(records) ? records : [];
  /** @param {AuditRecord} r */
  const at = (r) => Date.parse(r.at);
  let best;
  for (const r of list) {
    const t = at(r);
    if (!Number.isFinite(t)) continue;
    if (kind === 'failover' && r.type === 'failover' && r.to === state.route && t <= state.time + MATCH_SLACK_MS && t >= state.time - MATCH_BEFORE_MS) best = r;
    if (kind === 'return' && r.type === 'return' && r.to === state.route && Math.abs(t - state.time) <= MATCH_SLACK_MS) best = r;
    if (kind === 'give-up' && r.type === 'give-up' && r.code === state.code && t <= state.time + MATCH_SLACK_MS
      && t >= (state.failureTime !== undefined ? state.failureTime : state.time - MATCH_BEFORE_MS) - MATCH_SLACK_MS) best = r;
    // A hedge is decided at least its delay after its request went out (never
    // before its header: a slack there let the next request, sent within two
    // seconds, claim the same record), and reported by its first chunk, or by
    // the request's end when neither call streamed.
    if (kind === 'hedge' && r.type === 'hedge' && r.from === state.route && typeof state.end === 'number'
      && t >= state.time && t <= state.end + MATCH_SLACK_MS) best = r;
  }
  return best;
}

/**
 * The breaker that opened on `channel` around a failover record.
 * @param {string | undefined} channel
 * @param {AuditRecord | undefined} record
 * @param {AuditRecord[] | undefined} records
 */
function openRecord(channel, record, records) {
  const list = Array.isArray(records) ? records : [];
  const t = record ? Date.parse(record.at) : NaN;
  let best;
  for (const r of list) {
    if (r.type !== 'circuit-open' || r.channel !== channel) continue;
    const rt = Date.parse(r.at);
    if (Number.isFinite(t) && rt <= t + MATCH_SLACK_MS && rt >= t - MATCH_BEFORE_MS) best = r;
  }
  return best;
}

/**
 * What one row says: `{kind, text, details: [[label, value]]}`, or null when
 * the row is not to be shown (a give-up or return with no audit record).
 * @param {RowKind} kind
 * @param {RowState | undefined} state
 * @param {AuditRecord[] | undefined} records
 * @param {string | undefined} locale
 * @returns {RowView | null}
 */
function rowView(kind, state, records, locale) {
  if (!state) return null;
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  const record = matchRecord(kind, state, records);
  if (kind === 'failover') {
    const from = state.from || (record && record.from);
    const code = state.code || (record && record.code) || 'UNKNOWN';
    const times = (state.count ?? 0) > 1 ? ` ×${state.count}` : '';
    const text = from ? t('row.failover', { from, code, times, to: state.route }) : t('row.failoverNoFrom', { to: state.route, code });
    /** @type {Detail[]} */
    const details = [[t('row.code'), state.status ? `${code} (${state.status})` : code]];
    if (record && record.class) details.push([t('row.class'), translateOr(locale, `class.${record.class}`, record.class)]);
    const opened = openRecord(from, record, records);
    if (opened && opened.openUntil) details.push([t('row.openUntil'), clock(opened.openUntil)]);
    if (state.count) details.push([t('row.attempts'), String(state.count)]);
    const where = progressText(record, t);
    if (where) details.push([t('row.where'), where]);
    return { kind, text, details };
  }
  if (kind === 'return') {
    if (!record) return null;
    return { kind, text: t('row.return', { channel: state.route }), details: [] };
  }
  if (kind === 'give-up') {
    if (!record) return null;
    const reason = translateOr(locale, `reason.${record.reason}`, record.reason);
    const code = record.code || state.code;
    const channel = chan(record.channel) || state.route || '?';
    const tried = triedList(record.tried, locale);
    // A give-up after a failover is about every channel tried, not only the
    // last: the row names them all; the details list one per line.
    const text = tried.length > 1
      ? t('row.giveUpTried', { channel, reason, code, tried: tried.join(t('list.sep')) })
      : t('row.giveUp', { channel, reason, code });
    /** @type {Detail[]} */
    const details = [[t('row.reason'), reason], [t('row.code'), code]];
    if (tried.length) details.push([t('row.tried'), tried]);
    const where = progressText(record, t);
    if (where) details.push([t('row.where'), where]);
    return { kind, text, details };
  }
  if (kind === 'hedge') {
    if (!record) return null;
    return hedgeView(record, state.route || '?', locale);
  }
  return null;
}

/**
 * A hedge row from its record: who won, what it saved, what the loser had cost.
 * @param {AuditRecord} record
 * @param {string} route - the request's channel, when the record names none
 * @param {string | undefined} locale
 * @returns {RowView}
 */
function hedgeView(record, route, locale) {
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  const from = chan(record.from) || route;
  const to = chan(record.to) || '?';
  const ms = (/** @type {unknown} */ n) => (typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : undefined);
  const after = ms(record.afterMs);
  const afterText = after !== undefined ? seconds(after, t) : '?';
  const saved = ms(record.savedMs);
  const winner = record.winner === 'hedge' || record.winner === 'primary' ? record.winner : 'none';
  const end = winner === 'none' ? translateOr(locale, `hedgeEnd.${record.end}`, record.end || '?') : '';
  const text = winner === 'hedge'
    ? t(saved !== undefined ? 'row.hedgeWonSaved' : 'row.hedgeWon', { from, to, after: afterText, saved: saved !== undefined ? seconds(saved, t) : '' })
    : winner === 'primary' ? t('row.hedgePrimary', { from, to, after: afterText }) : t('row.hedgeNone', { from, to, after: afterText, end });
  /** @type {Detail[]} */
  const details = [[t('row.hedgeWinner'), winner === 'none' ? end : t(`row.hedgeWinner.${winner}`, { channel: winner === 'hedge' ? to : from })]];
  const first = ms(record.firstTokenMs);
  if (winner !== 'none' && first !== undefined) details.push([t('row.firstToken'), seconds(first, t)]);
  if (winner === 'hedge') details.push([t('row.saved'), saved !== undefined ? seconds(saved, t) : t('row.savedUnknown')]);
  const wait = ms(record.loserWaitMs);
  if (wait !== undefined) {
    const loser = winner === 'hedge' ? from : to;
    details.push([t('row.loserWait'), t('row.loserWaitValue', { channel: loser, wait: seconds(wait, t) })]);
  }
  const why = hedgeReason(record.reason, t);
  details.push([t('row.hedgeAfter'), why ? t('row.hedgeAfterValue', { after: afterText, why }) : afterText]);
  if (record.code) details.push([t('row.code'), String(record.code)]);
  return { kind: 'hedge', text, details };
}

/**
 * The module's reason for a hedge's delay (policy/hedge.go hedgeDelay) in the
 * page's language: a config key stays as is, the learned delay's two
 * wordings are reworded, anything else shows as the module wrote it.
 * @param {unknown} reason
 * @param {Translate} t
 */
function hedgeReason(reason, t) {
  if (typeof reason !== 'string' || !reason) return '';
  let m = /^p(\d+) of the last (\d+) first tokens$/.exec(reason);
  if (m) return t('row.hedgeReason.percentile', { p: m[1], n: m[2] });
  m = /^([\w.]+): (\d+) of (\d+) first tokens measured$/.exec(reason);
  if (m) return t('row.hedgeReason.learning', { key: m[1], n: m[2], need: m[3] });
  return reason;
}

/**
 * `1.2 s` / `1.2 秒` of a duration in ms.
 * @param {number} ms
 * @param {Translate} t
 */
function seconds(ms, t) {
  return t('row.seconds', { n: (ms / 1000).toFixed(1) });
}

/** @param {string | Channel | undefined} c */
const chan = (c) => (c && typeof c === 'object' ? `${c.provider}/${c.model}` : c);

/**
 * A give-up record's `tried` (what the session tried since its last success),
 * as one line per channel: `p/m (CODE ×2)`. Entries may be channel strings or
 * `{channel, code, count}`; anything else is skipped.
 * @param {TriedEntry[] | undefined} tried
 * @param {string | undefined} locale
 * @returns {string[]}
 */
function triedList(tried, locale) {
  if (!Array.isArray(tried)) return [];
  const out = [];
  for (const x of tried) {
    const channel = typeof x === 'string' ? x : x && chan(x.channel);
    if (!channel) continue;
    const code = x && typeof x === 'object' && x.code ? String(x.code) : '';
    const n = x && typeof x === 'object' ? Number(x.count || x.attempts || 0) : 0;
    out.push(code ? translate(locale, 'row.triedOne', { channel, code, times: n > 1 ? ` ×${n}` : '' }) : channel);
  }
  return out;
}

/**
 * "failover 2/4 · turn 3 step 1" from a failover or give-up record's
 * progress fields, each part only when the record has it; '' when none.
 * @param {AuditRecord | undefined} record
 * @param {Translate} t
 */
function progressText(record, t) {
  if (!record) return '';
  const parts = [];
  if ((record.failovers ?? 0) > 0) {
    parts.push(t('row.failoverN', { n: record.failovers, max: record.maxFailovers !== undefined ? record.maxFailovers : '?' }));
  }
  if (record.turn !== undefined) parts.push(t(record.step !== undefined ? 'row.turnStep' : 'row.turn', { turn: record.turn, step: record.step }));
  return parts.join(' · ');
}

/**
 * `HH:MM:SS` of an ISO time, in the browser's zone.
 * @param {string} iso
 */
function clock(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  /** @param {number} n */
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

module.exports = { triedList, whereOf, routeOf, failureOf, turnErrorOf, isFinish, failureState, routeState, turnEndState, hedgeState, matchRecord, rowView, hedgeView, progressText, clock };
