// @ts-check
// The renderer of the inline rows (`conversation.chat.node`, key
// `dsh-resilience-row`). The node carries what the session log says; the
// details come from the plugin's audit records for the session, fetched once
// per session and again (at most once a second) when a newer row needs them.
'use strict';

const { react, primitives, useLocale, call } = require('./shell.cjs');
const { rowView } = require('./rows.cjs');
const { ensureStyle } = require('./style.cjs');

function recordsStore(ctx) {
  const bySession = new Map(); // session -> {records, fetchedAt, pending, listeners}
  const entry = (session) => {
    if (!bySession.has(session)) bySession.set(session, { records: undefined, fetchedAt: 0, pending: undefined, listeners: new Set() });
    return bySession.get(session);
  };
  const fetch = (session) => {
    const e = entry(session);
    if (e.pending || Date.now() - e.fetchedAt < 1000) return;
    e.pending = call(ctx, 'rows', { session }).then((r) => {
      e.pending = undefined;
      e.fetchedAt = Date.now();
      if (r && r.ok) {
        e.records = r.value.records;
        for (const l of e.listeners) l();
      }
    }, () => { e.pending = undefined; e.fetchedAt = Date.now(); });
  };
  return { entry, fetch };
}

function makeRowView(ctx) {
  const store = recordsStore(ctx);
  return function ResilienceRow(props) {
    const React = react();
    const h = React.createElement;
    const locale = useLocale(ctx);
    const session = props && (props.sessionId || (props.session && props.session.id));
    const data = props && props.node && props.node.data;
    const [, bump] = React.useState(0);
    React.useEffect(() => {
      if (!session) return undefined;
      const e = store.entry(session);
      const l = () => bump((n) => n + 1);
      e.listeners.add(l);
      const recent = data && data.state && e.fetchedAt < data.state.time + 5000;
      if (e.records === undefined || recent) store.fetch(session);
      // A row that appeared live may precede its audit line: look once more.
      const again = recent ? setTimeout(() => store.fetch(session), 1500) : undefined;
      return () => { e.listeners.delete(l); clearTimeout(again); };
    }, [session, data && data.state && data.state.seq]);
    if (!data || !session) return null;
    const records = store.entry(session).records;
    const view = rowView(data.kind, data.state, records, locale);
    if (!view) return null;
    ensureStyle();
    // The host's own chevron (the stock retry row's), turned as the row opens.
    let chevron = null;
    try { chevron = h(primitives().IconChevronDownOutline14, { className: 'dshr-chevron' }); } catch { /* text only */ }
    const value = (v) => (Array.isArray(v) ? h('ol', { 'data-role': 'tried' }, ...v.map((x, i) => h('li', { key: i }, x))) : v);
    return h('div', {
      'data-testid': 'dsh-resilience-row',
      'data-kind': view.kind,
      className: 'dshr-row',
    }, view.details.length
      // Opening the details looks again for a record still missing (its audit line may land late).
      ? h('details', { onToggle: (e) => { if (e.currentTarget.open) store.fetch(session); } },
        h('summary', null, chevron, h('span', null, view.text)),
        h('dl', null,
          ...view.details.flatMap(([k, v]) => [h('dt', { key: `${k}-k` }, k), h('dd', { key: `${k}-v` }, value(v))])))
      : h('span', null, view.text));
  };
}

module.exports = { makeRowView };
