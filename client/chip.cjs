// @ts-check
// The composer chip: where the next failover goes, coloured by the session's
// channel; a click opens the shell's Menu to choose the backup, with the
// status dock under it. Choosing calls the host's set-backup, the same write
// path as `/resilience backup`; the live status then brings the change back,
// so a change made elsewhere shows at once too. With quota rules configured,
// the same Menu carries the session's quota switch and pool; they go through
// the commands' write path (`/resilience quota`, `/resilience pool`) too.
'use strict';

const { react, primitives, service, useLocale, call } = require('./shell.cjs');
const { useLiveStatus, useTick } = require('./live.cjs');
const { chipView } = require('./status.cjs');
const { menuItems, quotaItems, quotaChoice, CHAIN_ORDER } = require('./menu.cjs');
const { hostNow } = require('./countdown.cjs');
const { translate } = require('./i18n.cjs');
const { Dock } = require('./dock.cjs');

const DOCK_ID = 'dsh-resilience:dock';

const TONES = {
  ok: { border: 'var(--dsw-alias-color-border-subtle, #d0d7de)', color: 'inherit', background: 'transparent' },
  warn: { border: '#d4a72c', color: '#7d4e00', background: '#fff8c5' },
  error: { border: '#cf222e', color: '#a40e26', background: '#ffebe9' },
  off: { border: 'var(--dsw-alias-color-border-subtle, #d0d7de)', color: '#8c959f', background: 'transparent' },
};

function chipStyle(tone) {
  const c = TONES[tone] || TONES.ok;
  return { height: 28, padding: '0 10px', borderRadius: 14, border: `1px solid ${c.border}`, color: c.color, background: c.background, fontSize: 12, whiteSpace: 'nowrap', maxWidth: 260, overflow: 'hidden', textOverflow: 'ellipsis', cursor: tone === 'off' ? 'not-allowed' : 'pointer' };
}

function makeChip(ctx) {
  return function ResilienceChip(props) {
    const React = react();
    const h = React.createElement;
    const locale = useLocale(ctx);
    const t = (k, v) => translate(locale, k, v);
    const session = (props && (props.sessionId || (props.session && props.session.id))) || undefined;
    const live = useLiveStatus(ctx, session);
    const [open, setOpen] = React.useState(false);
    const [answer, setAnswer] = React.useState(undefined);
    const [problem, setProblem] = React.useState(undefined);
    useTick(true);

    // Candidates are fetched ahead (and again on each open, keeping the old
    // list meanwhile): the Menu places itself once, when it opens, so its
    // content must not grow afterwards.
    React.useEffect(() => {
      const stop = new AbortController();
      call(ctx, 'candidates', {}, stop.signal).then((r) => { if (!stop.signal.aborted && r && r.ok) setAnswer(r.value); });
      return () => stop.abort();
    }, [open]);

    const noConnection = !service(ctx, 'connection');
    const reason = noConnection ? t('chip.noConnection') : !session ? t('chip.noSession') : live.status === undefined && live.error ? t('chip.noStatus') : undefined;
    if (reason) {
      return h('button', { type: 'button', disabled: true, 'data-testid': 'dsh-resilience-chip', 'data-tone': 'off', 'data-disabled-reason': reason, title: reason, style: chipStyle('off') }, reason);
    }
    const nowMs = hostNow(live.status, live.receivedAt, Date.now());
    const view = chipView(live.status, nowMs, locale);
    const status = live.status;
    const menu = menuItems(answer ? { ...answer, backup: status ? status.backup : answer.backup } : undefined, locale);
    const items = menu.items.map((it) => (it.type ? it : {
      id: it.id,
      label: h('span', { 'data-channel': it.channel || '', 'data-testid': 'dsh-resilience-menu-item', style: { display: 'inline-flex', gap: 8 } },
        h('span', null, it.label), it.hint ? h('span', { style: { opacity: 0.6 } }, it.hint) : null),
    }));
    // The Menu marks one selected item (the backup): the quota and pool
    // choices carry their own mark. Guarded: a bad quota answer costs only these items.
    try {
      for (const it of quotaItems(status && status.quota, locale)) {
        items.push(it.type ? it : {
          id: it.id,
          label: h('span', {
            'data-testid': it.quota ? 'dsh-resilience-quota' : 'dsh-resilience-pool',
            ...(it.quota ? { 'data-quota': it.quota } : { 'data-pool': it.pool }),
            'data-current': it.current ? 'true' : 'false',
            style: { display: 'inline-flex', gap: 8 },
          }, h('span', { style: { width: 12 } }, it.current ? '✓' : ''), h('span', null, it.label)),
        });
      }
    } catch { /* the backup part stays usable */ }
    const onSelect = async (id) => {
      if (id === DOCK_ID) return; // the dock is shown as the menu's footer item: not a choice
      setProblem(undefined);
      const q = quotaChoice(id);
      const r = q
        ? await call(ctx, q.endpoint, { session, value: q.value })
        : await call(ctx, 'set-backup', id === CHAIN_ORDER ? { clear: true } : { channel: id });
      if (!r || !r.ok) setProblem(t(q ? 'menu.quotaError' : 'menu.error', { message: (r && r.error && r.error.message) || '?' }));
      setOpen(false);
    };
    const anchor = h('button', {
      type: 'button',
      'data-testid': 'dsh-resilience-chip',
      'data-tone': view.tone,
      'data-target': view.target ? view.target.channel : '',
      title: problem || t('chip.title'),
      onClick: () => setOpen((o) => !o),
      style: chipStyle(status ? view.tone : 'off'),
    }, status ? view.text : t('menu.loading'));
    const P = primitives();
    return h(P.Menu, {
      open,
      anchor,
      items,
      selectedId: menu.selectedId,
      onSelect: (id) => { onSelect(id).catch(() => {}); },
      onClose: () => setOpen(false),
      portal: true,
      side: 'top',
      align: 'end',
      // The Menu's footer takes items; the dock rides in one, outside the
      // scrolling list, so it stays in view however many candidates there are.
      footer: status ? [{ id: DOCK_ID, label: h(Dock, { status, nowMs, locale }) }] : undefined,
    });
  };
}

module.exports = { makeChip };
