// @ts-check
// The picker's items: `Chain order` (no backup) first, then every candidate
// the host vouched for (the chain, then the adapters' other models). The
// selected item is the current backup, or `Chain order` when there is none.
// When the row configures quota rules (the status carries `quota`), the
// session's quota switch (On, Off, Default) and pool (each pool, Off,
// Default) follow, each section headed by its current state and source.
'use strict';

const { translate } = require('./i18n.cjs');
const { windowLabel } = require('./status.cjs');

/**
 * @import { Candidate, CandidatesAnswer, QuotaView, SlowBreaker } from '../host-shim/web-rpc.js'
 * @import { Translate } from './i18n.cjs'
 */

/** @typedef {{type: 'label', id: string, text: string}} MenuLabel */
/** @typedef {{type: 'separator', id: string}} MenuSeparator */

/**
 * A backup choice: `Chain order` (channel null) or a candidate.
 * @typedef {object} BackupItem
 * @property {undefined} [type]
 * @property {string} id
 * @property {string} label
 * @property {string | null} channel
 * @property {string} [hint]
 * @property {string} [window]
 * @property {boolean} [slow]
 */

/**
 * A quota switch (`quota`) or pool (`pool`) choice.
 * @typedef {object} QuotaItem
 * @property {undefined} [type]
 * @property {string} id
 * @property {string} label
 * @property {string} [quota]
 * @property {string} [pool]
 * @property {boolean} current
 */

const CHAIN_ORDER = 'dsh-resilience:chain-order';
const QUOTA_PREFIX = 'dsh-resilience:quota:';
const POOL_PREFIX = 'dsh-resilience:pool:';

/**
 * @param {(CandidatesAnswer & {slow?: SlowBreaker[]}) | undefined} answer
 *   `slow`: the status's slow-call breakers; a slow channel's item says so.
 * @param {string | undefined} locale
 * @returns {{items: Array<MenuLabel | MenuSeparator | BackupItem>, selectedId: string}} plain items; the UI adds the hooks.
 */
function menuItems(answer, locale) {
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  /** @type {Array<MenuLabel | MenuSeparator | BackupItem>} */
  const items = [{ type: 'label', id: 'heading', text: t('menu.heading') }, { id: CHAIN_ORDER, label: t('menu.chainOrder'), channel: null }];
  if (!answer) return { items: [...items, { type: 'label', id: 'loading', text: t('menu.loading') }], selectedId: CHAIN_ORDER };
  const chain = answer.chain || [];
  const cands = (answer.candidates || []).slice().sort((a, b) => rank(chain, a) - rank(chain, b));
  if (cands.length) items.push({ type: 'separator', id: 'sep' });
  for (const c of cands) {
    const n = chain.indexOf(c.channel);
    const hint = n >= 0 ? t('menu.inChain', { n: n + 1 }) : c.name && c.name !== c.channel.split('/')[1] ? c.name : undefined;
    const slow = isSlow(answer.slow, c.channel);
    const window = windowLabel(c.contextWindow); // the window beside each channel: a long session needs a large one
    items.push({ id: c.channel, label: c.channel, hint: [hint, window, slow ? t('menu.slow') : undefined].filter(Boolean).join(' · ') || undefined, window, channel: c.channel, slow });
  }
  return { items, selectedId: answer.backup || CHAIN_ORDER };
}

/**
 * Whether the slow-call breaker (policy/slow.go) holds `channel` slow: slow, or half-open on its probe.
 * @param {SlowBreaker[] | undefined} slow
 * @param {string} channel
 */
function isSlow(slow, channel) {
  const s = (slow || []).find((x) => x.channel === channel);
  return !!s && (s.state === 'slow' || s.state === 'half-open');
}

/**
 * The session's quota switch and pool: nothing without quota rules.
 * @param {QuotaView | undefined} quota
 * @param {string | undefined} locale
 * @returns {Array<MenuLabel | MenuSeparator | QuotaItem>} items; the chosen one of each section has `current: true`.
 */
function quotaItems(quota, locale) {
  if (!quota) return [];
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  /** @param {boolean} b */
  const onOff = (b) => t(b ? 'quota.on' : 'quota.off');
  // An inherited setting is the session's own from the fork on: its value is ticked, as a set one is.
  const owned = quota.source === 'session' || quota.source === 'inherited';
  const switchMode = owned ? (quota.enabled ? 'on' : 'off') : 'default';
  /** @type {Array<MenuLabel | MenuSeparator | QuotaItem>} */
  const items = [
    { type: 'separator', id: 'sep-quota' },
    { type: 'label', id: 'quota-heading', text: t('quota.heading', { state: onOff(quota.enabled), source: t(`quota.source.${owned ? quota.source : 'default'}`) }) },
  ];
  for (const mode of ['on', 'off', 'default']) {
    items.push({ id: QUOTA_PREFIX + mode, quota: mode, current: mode === switchMode,
      label: mode === 'default' ? t('quota.default', { state: onOff(quota.defaultEnabled) }) : t(`quota.${mode}`) });
  }
  const pools = quota.pools || [];
  const poolChoice = quota.poolSource === 'session' || quota.poolSource === 'inherited' ? quota.pool : quota.poolSource === 'off' ? 'off' : 'default';
  const poolState = quota.poolSource === 'off' ? t('pool.none') : quota.pool || t('pool.chain');
  items.push({ type: 'separator', id: 'sep-pool' },
    { type: 'label', id: 'pool-heading', text: t('pool.heading', { pool: poolState, source: t(`pool.source.${quota.poolSource || 'default'}`) }) });
  for (const name of pools) items.push({ id: POOL_PREFIX + name, pool: name, label: name, current: poolChoice === name });
  items.push({ id: `${POOL_PREFIX}off`, pool: 'off', label: t('pool.off'), current: poolChoice === 'off' },
    { id: `${POOL_PREFIX}default`, pool: 'default', label: t('pool.default'), current: poolChoice === 'default' });
  return items;
}

/**
 * A menu id as the write it asks for: `{endpoint, value}`, or undefined for a backup choice.
 * @param {unknown} id
 * @returns {{endpoint: 'set-quota' | 'set-pool', value: string} | undefined}
 */
function quotaChoice(id) {
  if (typeof id !== 'string') return undefined;
  if (id.startsWith(QUOTA_PREFIX)) return { endpoint: 'set-quota', value: id.slice(QUOTA_PREFIX.length) };
  if (id.startsWith(POOL_PREFIX)) return { endpoint: 'set-pool', value: id.slice(POOL_PREFIX.length) };
  return undefined;
}

/**
 * A candidate's place in the list: the chain's order, then the backup, then the rest.
 * @param {string[]} chain
 * @param {Candidate} c
 */
function rank(chain, c) {
  const n = chain.indexOf(c.channel);
  return n >= 0 ? n : chain.length + (c.source === 'backup' ? 0 : 1);
}

module.exports = { CHAIN_ORDER, menuItems, quotaItems, quotaChoice, isSlow };
