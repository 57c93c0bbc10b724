// @ts-check
// Effects are the only way out of the policy module: each step's effects go,
// one by one and in order, to the subscribers the composition root
// (index.js) registers, each of one role:
//   web view      web.js: what the page shows follows the module's word
//   shell         effect-shell.js: wake timer, probes, held waits, health saves
//   quota shell   quota.js: session homes, long-term waits, balance scripts
//   audit log     effect-audit.js: the record, the log line, the headless notice
//   Cordis events effect-events.js: announced for other plugins
// A view's failure never costs a decision; a failure elsewhere ends the
// step's effects, and the engine reports it (engine.js `fail`).

import { auditSubscriber } from './effect-audit.js';
import { eventSubscriber } from './effect-events.js';
import { shellSubscriber } from './effect-shell.js';

export { EVENTS } from './effect-events.js';

/** @import { Effect } from './policy-types.js' */

/**
 * @typedef {object} Subscriber
 * @property {string} role - for the warning when a view fails
 * @property {(fx: Effect) => void} effect
 * @property {boolean} [view] - only shows effects: its failure is logged and the rest go on
 */

/**
 * Sends each effect to every subscriber, in the order given.
 * @param {Effect[]} effects
 * @param {Subscriber[]} subscribers
 * @param {{warn(...args: unknown[]): void}} logger
 */
export function deliver(effects, subscribers, logger) {
  for (const fx of effects) {
    for (const s of subscribers) {
      if (!s.view) {
        s.effect(fx);
        continue;
      }
      try {
        s.effect(fx);
      } catch (e) {
        logger.warn('the %s failed on an effect: %s', s.role, e?.message ?? e); // a view never costs a decision
      }
    }
  }
}

/**
 * Everything the subscribers need, in one bag (tests build one).
 * @typedef {import('./effect-audit.js').AuditEnv & import('./effect-shell.js').ShellActions & {
 *   ctx: Pick<import('./host.js').Context, 'emit'>,
 *   observe?: (fx: Effect) => void,
 *   quota?: {effect(fx: Effect): void},
 * }} EffectEnv
 */

/**
 * The subscribers in the composition root's order.
 * @param {EffectEnv} env
 * @returns {Subscriber[]}
 */
export function subscribers(env) {
  /** @type {Array<Subscriber | undefined>} */
  const list = [
    env.observe && { role: 'web view', view: true, effect: env.observe },
    { role: 'shell', effect: shellSubscriber(env) },
    env.quota && { role: 'quota shell', effect: (fx) => env.quota?.effect(fx) },
    { role: 'audit log', effect: auditSubscriber(env) },
    { role: 'Cordis events', effect: eventSubscriber(env.ctx, env.logger) },
  ];
  return /** @type {Subscriber[]} */ (list.filter(Boolean));
}

/**
 * One step's effects carried out by the subscribers `env` names.
 * @param {Effect[]} effects
 * @param {EffectEnv} env
 */
export function carryOut(effects, env) {
  deliver(effects, subscribers(env), env.logger);
}
