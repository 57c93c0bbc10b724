// @ts-check
// The Cordis events subscriber: the effects other plugins may listen to,
// announced under this plugin's names and, where dsh-model-failover had one,
// under its name too (compat-events.js). A failing listener never changes a
// decision.

import { emitCompat, undeclared } from './compat-events.js';
import { EVENTS } from './event-names.js';

/** @import { Effect } from './policy-types.js' */
/** @import { Context } from './host.js' */

export { EVENTS };

/**
 * The event an effect is announced as, if any.
 * @param {Effect} fx
 * @returns {(typeof EVENTS)[keyof typeof EVENTS] | undefined}
 */
export function eventOf(fx) {
  switch (fx.kind) {
    case 'circuit': return fx.to === 'open' ? EVENTS.circuitOpened : fx.to === 'closed' ? EVENTS.circuitClosed : undefined;
    case 'failover': return EVENTS.failover;
    case 'give-up': return EVENTS.giveUp;
    case 'spill': return EVENTS.spill;
    case 'stall': return EVENTS.stall;
    case 'slow': return EVENTS.slow;
    case 'hedge': return EVENTS.hedge;
    case 'tool-retry': return EVENTS.toolRetry;
    default: return undefined;
  }
}

/**
 * @param {Pick<Context, 'emit'>} ctx
 * @param {{warn(...args: unknown[]): void}} logger
 * @returns {(fx: Effect) => void}
 */
export function eventSubscriber(ctx, logger) {
  return (fx) => {
    const event = eventOf(fx);
    if (!event) return;
    try {
      // The payload is the effect's own fields: its audit entry is the audit log's (effect-audit.js).
      const { audit: _audit, ...payload } = /** @type {Effect & {audit?: unknown}} */ (fx);
      ctx.emit(event, payload);
    } catch (e) {
      logger.warn('a %s listener failed: %s', event, e?.message ?? e);
    }
    emitCompat(ctx, event, fx, logger);
  };
}

/**
 * Emits a Cordis event; a listener that throws is logged, never the emitter's failure.
 * @param {import("@deepseek-ai/cordis").Context} ctx
 * @param {{warn(...args: unknown[]): void}} logger
 * @returns {(event: string, payload: object) => void}
 */
export function safeEmit(ctx, logger) {
  return (event, payload) => {
    try {
      undeclared(ctx).emit(event, payload);
    } catch (e) {
      logger.warn('a %s listener failed: %s', event, /** @type {any} */ (e)?.message ?? e);
    }
  };
}
