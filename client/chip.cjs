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
const { chipView, chipReason } = require('./status.cjs');
const { menuItems, quotaItems, quotaChoice, CHAIN_ORDER } = require('./menu.cjs');
const { hostNow } = require('./countdown.cjs');
const { translate } = require('./i18n.cjs');
const { Dock } = require('./dock.cjs');
const { makeReportView } = require('./report.cjs');
const { ensureStyle } = require('./style.cjs');
const { useMenuKeys, fromKeyboard } = require('./keys.cjs');

/**
 * @import { ClientContext } from './shell.cjs'
 * @import { CandidatesAnswer } from '../host-shim/web-rpc.js'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * What the composer's slot hands the chip: the session, in one of two forms.
 * @typedef {object} ChipProps
 * @property {string} [sessionId]
 * @property {{id?: string}} [session]
 */

const DOCK_ID = 'dsh-resilience:dock';
const REPORT_ID = 'dsh-resilience:report';

// The tones' colours are in style.cjs, by data-tone (the host's tokens, light
// and dark); the chip wraps rather than clips, so a long channel name shows whole.
/** @param {string} tone */
function chipStyle(tone) {
  return { cursor: tone === 'off' ? 'not-allowed' : 'pointer' };
}

/** @param {ClientContext} ctx */
function makeChip(ctx) {
  const ReportView = makeReportView(ctx);
  /** @param {ChipProps | undefined} props */
  return function ResilienceChip(props) {
    const React = react();
    const h = React.createElement;
    const locale = useLocale(ctx);
    /** @type {Translate} */
    const t = (k, v) => translate(locale, k, v);
    const session = (props && (props.sessionId || (props.session && props.session.id))) || undefined;
    const live = useLiveStatus(ctx, session);
    const [open, setOpen] = React.useState(false);
    const [answer, setAnswer] = React.useState(/** @type {CandidatesAnswer | undefined} */ (undefined));
    const [problem, setProblem] = React.useState(/** @type {string | undefined} */ (undefined));
    const [report, setReport] = React.useState(false);
    const chipRef = React.useRef(/** @type {HTMLButtonElement | null} */ (null));
    const byKeyboard = React.useRef(false);
    useTick(true);
    ensureStyle();
    useMenuKeys(open, chipRef, byKeyboard);

    // Candidates are fetched ahead (and again on each open, keeping the old
    // list meanwhile): the Menu places itself once, when it opens, so its
    // content must not grow afterwards.
    React.useEffect(() => {
      const stop = new AbortController();
      call(ctx, 'candidates', {}, stop.signal).then((r) => { if (!stop.signal.aborted && r && r.ok) setAnswer(r.value); });
      return () => stop.abort();
    }, [open]);

    const reason = chipReason({ connection: !!service(ctx, 'connection'), session, live }, locale);
    if (reason) {
      return h('button', { type: 'button', disabled: true, className: 'dshr-chip', 'data-testid': 'dsh-resilience-chip', 'data-tone': 'off', 'data-off': live.error === 'OFF' ? 'true' : undefined, 'data-error': live.error || undefined, 'data-disabled-reason': reason, title: reason, style: chipStyle('off') }, reason);
    }
    const nowMs = hostNow(live.status, live.receivedAt, Date.now());
    const view = chipView(live.status, nowMs, locale);
    const status = live.status;
    const menu = menuItems(answer ? { ...answer, backup: status ? status.backup : answer.backup, slow: status ? status.slow : undefined } : undefined, locale);
    const items = menu.items.map((it) => (it.type ? it : {
      id: it.id,
      label: h('span', { 'data-channel': it.channel || '', 'data-slow': it.slow ? 'true' : undefined, 'data-testid': 'dsh-resilience-menu-item', className: 'dshr-item', title: it.hint ? `${it.label} · ${it.hint}` : it.label },
        h('span', null, it.label), it.hint ? h('span', { className: 'dshr-hint' }, it.hint) : null),
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
            'aria-current': it.current ? 'true' : undefined,
            className: 'dshr-item',
          }, h('span', { style: { width: 12 }, 'aria-hidden': 'true' }, it.current ? '✓' : ''), h('span', null, it.label)),
        });
      }
    } catch { /* the backup part stays usable */ }
    /** @param {string} id */
    const onSelect = async (id) => {
      if (id === DOCK_ID) return; // the dock is shown as the menu's footer item: not a choice
      if (id === REPORT_ID) { setOpen(false); setReport(true); return; }
      setProblem(undefined);
      const q = quotaChoice(id);
      // The menu shows with a session only: without one the chip is a disabled label (chipReason).
      const r = q
        ? await call(ctx, q.endpoint, { session: /** @type {string} */ (session), value: q.value })
        : await call(ctx, 'set-backup', id === CHAIN_ORDER ? { clear: true } : { channel: id });
      if (!r || !r.ok) setProblem(t(q ? 'menu.quotaError' : 'menu.error', { message: (r && r.error && r.error.message) || '?' }));
      setOpen(false);
    };
    const chipText = status ? view.text : t('menu.loading');
    const anchor = h('button', {
      type: 'button',
      ref: chipRef,
      className: 'dshr-chip',
      'aria-haspopup': 'menu',
      'aria-expanded': open ? 'true' : 'false',
      'aria-label': t('chip.label', { text: chipText }),
      'data-testid': 'dsh-resilience-chip',
      'data-tone': view.tone,
      'data-target': view.target ? view.target.channel : '',
      title: problem || `${chipText}\n${t('chip.title')}`,
      onClick: (e) => { byKeyboard.current = fromKeyboard(e); setOpen((o) => !o); },
      style: chipStyle(status ? view.tone : 'off'),
    }, chipText);
    const P = primitives();
    const picker = h(P.Menu, {
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
      footer: status ? [
        { id: REPORT_ID, label: h('span', { 'data-testid': 'dsh-resilience-report-open', className: 'dshr-item' }, t('report.open')) },
        { id: DOCK_ID, label: h(Dock, { status, nowMs, locale }) },
      ] : undefined,
    });
    if (!report) return picker;
    return h(React.Fragment, null, picker, h(ReportView, { locale, onClose: () => { setReport(false); if (chipRef.current) chipRef.current.focus(); } }));
  };
}

module.exports = { makeChip };
