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
//   give-up:  a turn that ended in an error, confirmed by a `give-up` record.
//
// These functions are pure and total: the conversation definitions call them
// for every event of every session, and a throw there would make the
// session's history unreadable in the browser.
'use strict';

const { translate, translateOr } = require('./i18n.cjs');

/** `provider/model` of a `request/header`, or undefined. */
function routeOf(event) {
  const cfg = event && event.type === 'request/header' ? event.data && event.data.header && event.data.header.config : undefined;
  return cfg && cfg.provider && cfg.model ? `${cfg.provider}/${cfg.model}` : undefined;
}

/** The failure of an error finish chunk, or undefined. */
function failureOf(event) {
  if (!event || event.type !== 'assistant/chunk') return undefined;
  const d = event.data || {};
  const chunk = d.chunk;
  if (!chunk || chunk.type !== 'finish' || !chunk.reason || chunk.reason.kind !== 'error') return undefined;
  const f = chunk.reason.failure || {};
  return { code: String(f.code || 'UNKNOWN'), status: typeof f.status === 'number' ? f.status : undefined, where: `${d.turn}:${d.step}` };
}

/** The error a turn ended with, or undefined. */
function turnErrorOf(event) {
  if (!event || event.type !== 'turn/end') return undefined;
  const r = event.data && event.data.reason;
  if (!r || r.kind !== 'error') return undefined;
  return { code: String((r.error && r.error.code) || 'UNKNOWN'), turn: event.data.turn };
}

/**
 * State of a failure node: the failure, and how many there were in a row on
 * this route in this step (the `×3` of the row).
 * @param prevFailure - the previous failure node's state, if any.
 * @param prevRoute - the latest route node's state, if any.
 */
function failureState(event, prevFailure, prevRoute) {
  const f = failureOf(event);
  if (!f) return undefined;
  const sameRun = prevFailure && prevFailure.where === f.where && (!prevRoute || prevFailure.seq > prevRoute.seq);
  return { seq: event.seq, time: event.time, code: f.code, status: f.status, where: f.where, count: sameRun ? prevFailure.count + 1 : 1, route: prevRoute ? prevRoute.route : undefined };
}

/**
 * State of a route node (one per `request/header`), and what row it makes.
 * @param where - `turn:step` of the header (from the engine's location), if known.
 * @param prevRoute - the previous route node's state (undefined at the start
 *   of the history the browser loaded: then `from` is unknown).
 * @param lastFailure - the latest failure node's state.
 */
function routeState(event, where, prevRoute, lastFailure) {
  const route = routeOf(event);
  if (!route) return undefined;
  const reason = event.data && event.data.reason;
  if (where === undefined && lastFailure) where = lastFailure.where; // no location: the latest failure's step
  const from = prevRoute ? prevRoute.route : undefined;
  const failedHere = !!lastFailure && (!prevRoute || lastFailure.seq > prevRoute.seq) && lastFailure.where === where;
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

/** `turn:step` of an engine location (a header carries no turn or step of its own). */
function whereOf(location) {
  return location && location.kind === 'step' && location.turn && location.step ? `${location.turn.turn}:${location.step.step}` : undefined;
}

/** State of a give-up candidate: a turn that ended in an error. */
function turnEndState(event, lastFailure, lastRoute) {
  const err = turnErrorOf(event);
  if (!err) return undefined;
  return {
    seq: event.seq, time: event.time, code: err.code, turn: err.turn,
    route: lastRoute ? lastRoute.route : undefined,
    failureTime: lastFailure && lastFailure.where && lastFailure.where.split(':')[0] === String(err.turn) ? lastFailure.time : undefined,
  };
}

const MATCH_BEFORE_MS = 120000; // a failover record precedes its header by the waits in between
const MATCH_SLACK_MS = 2000;

/** The audit record behind a row, if any (records: the host's `rows` answer). */
function matchRecord(kind, state, records) {
  const list = Array.isArray(records) ? records : [];
  const at = (r) => Date.parse(r.at);
  let best;
  for (const r of list) {
    const t = at(r);
    if (!Number.isFinite(t)) continue;
    if (kind === 'failover' && r.type === 'failover' && r.to === state.route && t <= state.time + MATCH_SLACK_MS && t >= state.time - MATCH_BEFORE_MS) best = r;
    if (kind === 'return' && r.type === 'return' && r.to === state.route && Math.abs(t - state.time) <= MATCH_SLACK_MS) best = r;
    if (kind === 'give-up' && r.type === 'give-up' && r.code === state.code && t <= state.time + MATCH_SLACK_MS
      && t >= (state.failureTime !== undefined ? state.failureTime : state.time - MATCH_BEFORE_MS) - MATCH_SLACK_MS) best = r;
  }
  return best;
}

/** The breaker that opened on `channel` around a failover record. */
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
 */
function rowView(kind, state, records, locale) {
  if (!state) return null;
  const t = (k, v) => translate(locale, k, v);
  const record = matchRecord(kind, state, records);
  if (kind === 'failover') {
    const from = state.from || (record && record.from);
    const code = state.code || (record && record.code) || 'UNKNOWN';
    const times = state.count > 1 ? ` ×${state.count}` : '';
    const text = from ? t('row.failover', { from, code, times, to: state.route }) : t('row.failoverNoFrom', { to: state.route, code });
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
    const details = [[t('row.reason'), reason], [t('row.code'), code]];
    if (tried.length) details.push([t('row.tried'), tried]);
    const where = progressText(record, t);
    if (where) details.push([t('row.where'), where]);
    return { kind, text, details };
  }
  return null;
}

const chan = (c) => (c && typeof c === 'object' ? `${c.provider}/${c.model}` : c);

/**
 * A give-up record's `tried` (what the session tried since its last success),
 * as one line per channel: `p/m (CODE ×2)`. Entries may be channel strings or
 * `{channel, code, count}`; anything else is skipped.
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
 */
function progressText(record, t) {
  if (!record) return '';
  const parts = [];
  if (record.failovers > 0) {
    parts.push(t('row.failoverN', { n: record.failovers, max: record.maxFailovers !== undefined ? record.maxFailovers : '?' }));
  }
  if (record.turn !== undefined) parts.push(t(record.step !== undefined ? 'row.turnStep' : 'row.turn', { turn: record.turn, step: record.step }));
  return parts.join(' · ');
}

/** `HH:MM:SS` of an ISO time, in the browser's zone. */
function clock(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const p = (n) => String(n).padStart(2, '0');
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
}

module.exports = { triedList, whereOf, routeOf, failureOf, turnErrorOf, failureState, routeState, turnEndState, matchRecord, rowView, progressText, clock };
