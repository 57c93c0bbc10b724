// @ts-check
// The client plugin's entry (the `./client` export's factory returns this).
// One boot-time throw in a client plugin blanks the whole web UI, so `apply`
// injects only `slots` (always there), reaches every other service with
// ctx.get at render time, and guards each registration on its own: a part
// that cannot register is skipped, the rest still works.
'use strict';

const { makeChip } = require('./chip.cjs');
const { makeRowView } = require('./rowview.cjs');
const { makeSettingsCard } = require('./settings-card.cjs');
const { definitions, NODE_KIND } = require('./definitions.cjs');

/** @import { ClientContext } from './shell.cjs' */

/**
 * Runs `f`; a throw is told on the console and goes no further.
 * @param {string} label - what `f` registers
 * @param {() => void} f
 */
function attempt(label, f) {
  try {
    f();
  } catch (e) {
    try {
      console.warn(`dsh-resilience: ${label} not registered: ${(e && e.message) || e}`);
    } catch { /* nothing to tell it with */ }
  }
}

/** @param {ClientContext} ctx */
function apply(ctx) {
  attempt('composer chip', () => ctx.slots.inject('conversation.input.right', () => ctx.slots.register(
    { name: 'conversation.input.right', id: 'dsh-resilience-chip', order: 100, label: 'dsh-resilience' }, makeChip(ctx))));
  attempt('row renderer', () => ctx.slots.inject('conversation.chat.node', () => ctx.slots.register(
    { name: 'conversation.chat.node', key: NODE_KIND }, makeRowView(ctx))));
  attempt('settings card', () => ctx.slots.inject('settings.plugin.item', () => ctx.slots.register(
    { name: 'settings.plugin.item', key: 'dsh-resilience' }, makeSettingsCard(ctx))));
  attempt('conversation definitions', () => ctx.inject(['conversationEvents'], (sub) => {
    for (const def of definitions) attempt(def.kind, () => sub.conversationEvents.register(def));
  }));
}

module.exports = {
  name: 'dsh-resilience',
  inject: ['slots'],
  /** @param {ClientContext} ctx */
  apply(ctx) {
    attempt('client', () => apply(ctx));
  },
};
