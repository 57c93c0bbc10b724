// @ts-check
// The status dock, shown under the picker: every channel's breaker with a
// live countdown, each provider's breaker, the backup and the last decision.
// Lines wrap rather than clip: a long channel name or a Chinese decision must
// show whole in a narrow window.
'use strict';

const { react } = require('./shell.cjs');
const { dockView } = require('./status.cjs');
const { translate } = require('./i18n.cjs');

/**
 * @import { StatusAnswer } from '../host-shim/web-rpc.js'
 * @import { DockLine } from './status.cjs'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * @typedef {object} DockProps
 * @property {StatusAnswer} status
 * @property {number} nowMs - the host's now (countdown.cjs hostNow)
 * @property {string | undefined} locale
 */

/** @param {DockProps} props */
function Dock(props) {
  const React = react();
  const h = React.createElement;
  const { status, nowMs, locale } = props;
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  const v = dockView(status, nowMs, locale);
  /** @param {DockLine} l */
  const row = (l) => h('li', { key: l.channel, 'data-channel': l.channel, 'data-state': l.state },
    h('span', { className: 'dshr-name' }, l.provider ? `${l.provider} (*)` : l.channel,
      l.window ? h('span', { 'data-role': 'window', title: t('window.title'), style: { marginLeft: 6, opacity: 0.7 } }, l.window) : null),
    h('span', { 'data-role': 'state', title: l.lastCode ? t('dock.failures', { code: l.lastCode, n: l.failures }) : undefined }, l.text));
  /**
   * @param {string} title
   * @param {DockLine[]} lines
   */
  const section = (title, lines) => (lines.length ? [h('h3', { key: `${title}-h` }, title), h('ul', { key: `${title}-l`, 'aria-label': title }, lines.map(row))] : []);
  return h('div', { 'data-testid': 'dsh-resilience-dock', className: 'dshr-dock', role: 'group', 'aria-label': t('dock.label') },
    ...section(t('dock.title'), v.channels),
    ...section(t('dock.providers'), v.providers),
    h('p', null, `${t('dock.backup')}${t('sep')}`, h('span', { 'data-role': 'backup' }, v.backup)),
    h('p', { style: { marginTop: 0 } }, `${t('dock.last')}${t('sep')}`, h('span', { 'data-role': 'last' }, v.last)));
}

module.exports = { Dock };
