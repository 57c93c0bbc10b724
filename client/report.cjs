// The Report view: the host's `report` answer (the same numbers, words and
// timeline as `/resilience report`, computed once in host-shim/report.js) in
// the host's Modal. Opened from the chip's menu. The timeline SVG is the
// host's own markup (built from numbers and channel names, styled inside it).
'use strict';

const { react, primitives, call } = require('./shell.cjs');
const { translate } = require('./i18n.cjs');

/**
 * @import { ReportAnswer } from '../host-shim/web-rpc.js'
 * @import { ClientContext, Result } from './shell.cjs'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * @typedef {object} ReportProps
 * @property {string} locale
 * @property {() => void} onClose
 */

const WINDOWS = ['24h', '7d'];

/** @param {number} x - a share, 0 to 1 */
function percent(x) {
  return Number.isFinite(x) ? `${(x * 100).toFixed(x >= 0.9995 ? 0 : 2)}%` : '—';
}

/** @param {ClientContext} ctx */
function makeReportView(ctx) {
  /** @param {ReportProps} props */
  return function ReportView(props) {
    const React = react();
    const h = React.createElement;
    const P = primitives();
    const { locale, onClose } = props;
    /** @type {Translate} */
    const t = (k, v) => translate(locale, k, v);
    const [win, setWin] = React.useState(WINDOWS[0]);
    const [answer, setAnswer] = React.useState(/** @type {Result<ReportAnswer> | undefined} */ (undefined));
    React.useEffect(() => {
      const stop = new AbortController();
      setAnswer(undefined);
      call(ctx, 'report', { window: win, locale }, stop.signal).then((r) => { if (!stop.signal.aborted) setAnswer(r); });
      return () => stop.abort();
    }, [win, locale]);
    let body;
    if (!answer) body = h('p', { 'data-role': 'loading' }, t('report.loading'));
    else if (!answer.ok) body = h('p', { className: 'dshr-invalid', role: 'alert' }, t('report.error', { message: (answer.error && answer.error.message) || '?' }));
    else {
      const r = answer.value.report;
      const tot = r.totals || {};
      const nums = [['incidents', tot.incidents], ['failovers', tot.failovers], ['sessions', tot.sessions], ['stockFailed', tot.stockTurnsFailed], ['giveUps', tot.giveUps]];
      body = [
        h('dl', { key: 'n', 'data-role': 'numbers' }, ...nums.map(([k, n]) => h('div', { key: k, 'data-number': k }, h('dt', null, t(`report.${k}`)), h('dd', null, String(n ?? 0))))),
        h('figure', { key: 's', style: { margin: 0 } },
          h('div', { className: 'dshr-svg', 'data-role': 'timeline', role: 'img', 'aria-label': t('report.timeline'), dangerouslySetInnerHTML: { __html: answer.value.svg || '' } })),
        (r.channels || []).length ? h('table', { key: 'c', 'data-role': 'channels' },
          h('thead', null, h('tr', null, h('th', null, t('report.channel')), h('th', null, t('report.availability')))),
          h('tbody', null, ...r.channels.map((c) => h('tr', { key: c.channel }, h('td', { style: { fontFamily: 'var(--dsw-alias-font-mono, ui-monospace, monospace)' } }, c.channel), h('td', null, percent(c.availability))))))
          : h('p', { key: 'e' }, t('report.empty')),
      ];
    }
    return h(P.Modal, {
      open: true,
      onClose,
      title: t('report.title'),
      closeLabel: t('report.close'),
      className: 'dshr-modal',
    }, h('div', { className: 'dshr-report', 'data-testid': 'dsh-resilience-report' },
      h('div', { className: 'dshr-windows', role: 'group', 'aria-label': t('report.window', { window: t(`report.${win}`) }) },
        ...WINDOWS.map((w) => h(P.Pill, { key: w, active: w === win, 'aria-pressed': w === win, 'data-window': w, onClick: () => setWin(w) }, t(`report.${w}`)))),
      body));
  };
}

module.exports = { makeReportView };
