// @ts-check
// The status dock, shown under the picker: every channel's breaker with a
// live countdown, each provider's breaker, the backup and the last decision.
'use strict';

const { react } = require('./shell.cjs');
const { dockView } = require('./status.cjs');
const { translate } = require('./i18n.cjs');

const COLORS = { healthy: 'var(--dsw-alias-color-text-success, #1a7f37)', open: 'var(--dsw-alias-color-text-warning, #9a6700)', 'half-open': 'var(--dsw-alias-color-text-info, #0969da)' };

function Dock(props) {
  const React = react();
  const h = React.createElement;
  const { status, nowMs, locale } = props;
  const t = (k, v) => translate(locale, k, v);
  const v = dockView(status, nowMs, locale);
  const row = (l) => h('li', { key: l.channel, 'data-channel': l.channel, 'data-state': l.state, style: { display: 'flex', gap: 8, justifyContent: 'space-between' } },
    h('span', { style: { fontFamily: 'var(--dsw-alias-font-mono, monospace)' } }, l.provider ? `${l.provider} (*)` : l.channel),
    h('span', { 'data-role': 'state', title: l.lastCode ? `${l.lastCode}, ${l.failures} failures` : undefined, style: { color: COLORS[l.state], whiteSpace: 'nowrap' } }, l.text));
  const section = (title, lines) => (lines.length ? [h('div', { key: `${title}-h`, style: { fontWeight: 600, marginTop: 6 } }, title), h('ul', { key: `${title}-l`, style: { listStyle: 'none', margin: 0, padding: 0 } }, lines.map(row))] : []);
  return h('div', {
    'data-testid': 'dsh-resilience-dock',
    style: { display: 'block', width: '100%', textAlign: 'left', padding: '4px 0', fontSize: 12, lineHeight: '18px', minWidth: 300, cursor: 'default' },
  },
  ...section(t('dock.title'), v.channels),
  ...section(t('dock.providers'), v.providers),
  h('div', { style: { marginTop: 6 } }, `${t('dock.backup')}: `, h('span', { 'data-role': 'backup' }, v.backup)),
  h('div', null, `${t('dock.last')}: `, h('span', { 'data-role': 'last' }, v.last)));
}

module.exports = { Dock };
