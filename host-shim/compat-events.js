// dsh-model-failover's Cordis events, emitted beside this plugin's own, so a
// plugin written against that one keeps hearing the same names and payloads
// after its user switches. The one place that maps our events to theirs:
// effects.js and the probe settle in shell.js hand every emit through here.
//
// Their documented payloads:
//   model-failover/circuit-opened  {provider, model, level: 'model'|'platform'}
//   model-failover/circuit-closed  {provider, model, level: 'model'}
//   model-failover/failover        {from, to, agentId}   from/to: {provider, model}
//   model-failover/probe           {provider, model, ok, message?}
//
// Differences, by choice:
// - A provider breaker (our channel with model "*") is their platform
//   circuit. Theirs names the model whose opening tripped it; so does ours:
//   the module names the model of that provider that went down last
//   (`trippedBy`, policy/circuit.go), or "*" when none of its models is down
//   (its balance, or health adopted from another host, opened it). The
//   mapping keeps no state of its own.
// - Their circuit-closed is model-level only, so a provider breaker closing is
//   not mirrored (a listener reading `level: 'model'` would take "*" for a model).
// - Half-open is not theirs to hear: only open and closed are mirrored.

import { EVENTS } from './event-names.js';

export const COMPAT_EVENTS = {
  circuitOpened: 'model-failover/circuit-opened',
  circuitClosed: 'model-failover/circuit-closed',
  failover: 'model-failover/failover',
  probe: 'model-failover/probe',
};

/** @import { Channel } from './policy-types.js' */
/** @import { Context } from './host.js' */

/**
 * The fields of our events' payloads a mirrored event carries: an effect's
 * (circuit, failover), or a probe's outcome (shell.js).
 * @typedef {object} CompatSource
 * @property {Channel} [channel]
 * @property {string | null} [trippedBy] - a provider breaker opening: the model that tripped it
 * @property {Channel} [from]
 * @property {Channel} [to]
 * @property {string} [agent]
 * @property {boolean} [ok]
 * @property {string} [message]
 * @property {string} [code]
 */

/** @typedef {(event: string, payload: object) => [string, object] | undefined} CompatMapper */

const PROVIDER_MODEL = '*';
/** @param {{provider?: unknown, model?: unknown} | undefined} c */
const route = (c) => ({ provider: String(c?.provider ?? ''), model: String(c?.model ?? '') });

/**
 * Our event as dsh-model-failover's, if it had one.
 * @type {CompatMapper}
 */
export function modelFailoverEvent(event, payload) {
  const p = /** @type {CompatSource} */ (payload);
  switch (event) {
    case EVENTS.circuitOpened: {
      const c = route(p.channel);
      return c.model === PROVIDER_MODEL
        ? [COMPAT_EVENTS.circuitOpened, { provider: c.provider, model: p.trippedBy || PROVIDER_MODEL, level: 'platform' }]
        : [COMPAT_EVENTS.circuitOpened, { ...c, level: 'model' }];
    }
    case EVENTS.circuitClosed: {
      const c = route(p.channel);
      return c.model === PROVIDER_MODEL ? undefined : [COMPAT_EVENTS.circuitClosed, { ...c, level: 'model' }];
    }
    case EVENTS.failover:
      return [COMPAT_EVENTS.failover, { from: route(p.from), to: route(p.to), agentId: p.agent }];
    case EVENTS.probe: {
      /** @type {{provider: string, model: string, ok: boolean, message?: string}} */
      const out = { ...route(p.channel), ok: p.ok === true };
      if (!out.ok) out.message = p.message ?? p.code ?? 'probe failed';
      return [COMPAT_EVENTS.probe, out];
    }
    default:
      return undefined;
  }
}

/**
 * A context's `emit` for an event the host's declarations do not name (the
 * quota plugin's and dsh-model-failover's events, which this plugin emits
 * under their names): Cordis types `emit` by the declared names only.
 * @param {Pick<Context, 'emit'>} ctx
 */
export const undeclared = (ctx) => /** @type {{emit(name: string, payload: object): void}} */ (/** @type {unknown} */ (ctx));

/**
 * Emits the mirrored event, if any, after ours. A listener's throw is logged
 * and never reaches the caller (the decision is already taken).
 * @param {Pick<Context, 'emit'>} ctx
 * @param {string} event - our event's name
 * @param {object} payload - our event's payload
 * @param {{warn?: (...args: unknown[]) => void}} [logger]
 */
export function emitCompat(ctx, event, payload, logger) {
  /** @type {[string, object] | undefined} */
  let mapped;
  try {
    mapped = modelFailoverEvent(event, payload);
    if (mapped) undeclared(ctx).emit(mapped[0], mapped[1]);
  } catch (e) {
    logger?.warn?.('a %s listener failed: %s', mapped?.[0] ?? event, e?.message ?? e);
  }
}
