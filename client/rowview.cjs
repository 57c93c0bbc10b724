// @ts-check
// The renderer of the inline rows (`conversation.chat.node`, key
// `dsh-resilience-row`). The node carries what the session log says; the
// details come from the plugin's audit records for the session, fetched once
// per session and again (at most once a second) when a newer row needs them
// or a recent row's record has not landed yet.
'use strict';

const { react, primitives, useLocale, call } = require('./shell.cjs');
const { rowView, matchRecord } = require('./rows.cjs');
const { ensureStyle } = require('./style.cjs');

const GAP_MS = 1000; // at most one `rows` call a second per session
const LIVE_MS = 120000; // a row this recent may still be waiting for its audit line
const RETRY_MS = 2000;
const RETRIES = 15;
// A hedge candidate stands at every request of every session: it asks for
// records only while the host hedges (the `rows` answer says so), and looks
// again for a late record a few times only.
const HEDGE_RETRIES = 3;

/**
 * @import { SyntheticEvent } from 'react'
 * @import { ClientContext } from './shell.cjs'
 * @import { AuditRecord } from '../host-shim/web-rpc.js'
 * @import { Detail } from './rows.cjs'
 * @import { RowData } from './definitions.cjs'
 */

/**
 * One session's audit records, and the bookkeeping of their fetch.
 * @typedef {object} Entry
 * @property {AuditRecord[] | undefined} records - undefined until the first answer
 * @property {boolean} hedging - the host's row hedges requests (or the records hold a hedge)
 * @property {number} fetchedAt
 * @property {Promise<void> | undefined} pending - the fetch in flight
 * @property {boolean} again - a fetch was asked for while one was in flight
 * @property {ReturnType<typeof setTimeout> | undefined} timer - a fetch waiting out the gap
 * @property {Set<() => void>} listeners - the rows to render again when records come
 */

/**
 * What the chat's node slot hands a row: its session (in one of two forms) and its node.
 * @typedef {object} RowProps
 * @property {string} [sessionId]
 * @property {{id?: string}} [session]
 * @property {{data?: RowData}} [node]
 */

/** @param {ClientContext} ctx */
function recordsStore(ctx) {
  /** @type {Map<string, Entry>} */
  const bySession = new Map();
  /**
   * @param {string} session
   * @returns {Entry}
   */
  const entry = (session) => {
    if (!bySession.has(session)) bySession.set(session, { records: undefined, hedging: false, fetchedAt: 0, pending: undefined, again: false, timer: undefined, listeners: new Set() });
    return /** @type {Entry} */ (bySession.get(session)); // set just above when missing
  };
  // A request inside the gap, or while one is in flight, is kept for later,
  // not dropped: a row opened just after a fetch that missed its (late) audit
  // line must still get a fetch that can see it.
  /** @param {string} session */
  const fetch = (session) => {
    const e = entry(session);
    if (e.pending) { e.again = true; return; }
    const wait = GAP_MS - (Date.now() - e.fetchedAt);
    if (wait > 0) {
      if (!e.timer) e.timer = setTimeout(() => { e.timer = undefined; fetch(session); }, wait);
      return;
    }
    const done = () => {
      e.pending = undefined;
      e.fetchedAt = Date.now();
      if (e.again) { e.again = false; fetch(session); }
    };
    e.pending = call(ctx, 'rows', { session }).then((r) => {
      if (r && r.ok) {
        e.records = r.value.records;
        e.hedging = r.value.hedging === true || (Array.isArray(e.records) && e.records.some((x) => x && x.type === 'hedge'));
      }
      done();
      if (r && r.ok) for (const l of e.listeners) l();
    }, done);
  };
  return { entry, fetch };
}

/** @param {ClientContext} ctx */
function makeRowView(ctx) {
  const store = recordsStore(ctx);
  /** @param {RowProps | undefined} props */
  return function ResilienceRow(props) {
    const React = react();
    const h = React.createElement;
    const locale = useLocale(ctx);
    const session = props && (props.sessionId || (props.session && props.session.id));
    const data = props && props.node && props.node.data;
    const hedge = !!data && data.kind === 'hedge';
    // When the row's request last moved: a hedge's record is written before its request ends.
    const state = data && data.state;
    const last = state ? ('end' in state && typeof state.end === 'number' ? state.end : state.time) : 0;
    const [, bump] = React.useState(0);
    React.useEffect(() => {
      if (!session) return undefined;
      const e = store.entry(session);
      const l = () => bump((n) => n + 1);
      e.listeners.add(l);
      const recent = data && data.state && e.fetchedAt < last + 5000 && (!hedge || e.hedging);
      if (e.records === undefined || recent) store.fetch(session);
      return () => { e.listeners.delete(l); };
    }, [session, data && data.state && data.state.seq]);
    const entry = session ? store.entry(session) : undefined;
    const records = entry ? entry.records : undefined;
    // A row that appeared live may precede its audit line (the audit log is
    // appended on its own queue): while a recent row has no record, look
    // again every few seconds, a bounded number of times, until it lands.
    const tries = React.useRef(0);
    const missing = !!(data && data.state && session && records !== undefined && !matchRecord(data.kind, data.state, records)
      && Math.abs(Date.now() - last) < LIVE_MS && tries.current < (hedge ? HEDGE_RETRIES : RETRIES) && (!hedge || (entry && entry.hedging)));
    React.useEffect(() => {
      if (!missing) return undefined;
      const id = setTimeout(() => { tries.current += 1; store.fetch(session); }, RETRY_MS);
      return () => clearTimeout(id);
    }, [missing, records]);
    if (!data || !session) return null;
    const view = rowView(data.kind, data.state, records, locale);
    if (!view) return null;
    ensureStyle();
    // The host's own chevron (the stock retry row's), turned as the row opens.
    let chevron = null;
    try { chevron = h(primitives().IconChevronDownOutline14, { className: 'dshr-chevron' }); } catch { /* text only */ }
    /** @param {Detail[1]} v */
    const value = (v) => (Array.isArray(v) ? h('ol', { 'data-role': 'tried' }, ...v.map((x, i) => h('li', { key: i }, x))) : v);
    return h('div', {
      'data-testid': 'dsh-resilience-row',
      'data-kind': view.kind,
      className: 'dshr-row',
    }, view.details.length
      // Opening the details looks again for a record still missing (its audit line may land late).
      ? h('details', { onToggle: /** @param {SyntheticEvent<HTMLDetailsElement>} e */ (e) => { if (e.currentTarget.open) store.fetch(session); } },
        h('summary', null, chevron, h('span', null, view.text)),
        h('dl', null,
          ...view.details.flatMap(([k, v]) => [h('dt', { key: `${k}-k` }, k), h('dd', { key: `${k}-v` }, value(v))])))
      : h('span', null, view.text));
  };
}

module.exports = { makeRowView };
