// The picker's items: `Chain order` (no backup) first, then every candidate
// the host vouched for (the chain, then the adapters' other models). The
// selected item is the current backup, or `Chain order` when there is none.
'use strict';

const { translate } = require('./i18n.cjs');

const CHAIN_ORDER = 'dsh-resilience:chain-order';

/**
 * @param {{chain: string[], backup: string|null, candidates: {channel, source, name?}[]}} answer
 * @returns {{items: object[], selectedId: string}} plain items; the UI adds the hooks.
 */
function menuItems(answer, locale) {
  const t = (k, v) => translate(locale, k, v);
  const items = [{ type: 'label', id: 'heading', text: t('menu.heading') }, { id: CHAIN_ORDER, label: t('menu.chainOrder'), channel: null }];
  if (!answer) return { items: [...items, { type: 'label', id: 'loading', text: t('menu.loading') }], selectedId: CHAIN_ORDER };
  const chain = answer.chain || [];
  const cands = (answer.candidates || []).slice().sort((a, b) => rank(chain, a) - rank(chain, b));
  if (cands.length) items.push({ type: 'separator', id: 'sep' });
  for (const c of cands) {
    const n = chain.indexOf(c.channel);
    items.push({ id: c.channel, label: c.channel, hint: n >= 0 ? t('menu.inChain', { n: n + 1 }) : c.name && c.name !== c.channel.split('/')[1] ? c.name : undefined, channel: c.channel });
  }
  return { items, selectedId: answer.backup || CHAIN_ORDER };
}

function rank(chain, c) {
  const n = chain.indexOf(c.channel);
  return n >= 0 ? n : chain.length + (c.source === 'backup' ? 0 : 1);
}

module.exports = { CHAIN_ORDER, menuItems };
