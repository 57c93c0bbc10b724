// @ts-check
// Carries out the policy's effects (wit/policy.wit `effect`): the one switch
// over effect kinds. Each kind is audited and announced as a Cordis event for
// other plugins; a failing listener or log write never changes a decision.

import { toolAuditRecord } from './tools.js';
import { emitCompat } from './compat-events.js';

/** @import { Channel, Effect, Route } from './policy-types.js' */
/** @import { Context } from './host.js' */

// A channel's identity in records is {provider, model}: either part may hold
// a "/", so a joined text would make {a/b, c} and {a, b/c} one channel.
// "provider/model" is for people only (log lines, /resilience).
/** @param {Channel} c */
export const channelId = (c) => ({ provider: c.provider, model: c.model });
/** @param {Channel} c */
const ch = (c) => `${c.provider}/${c.model}`;
/**
 * A pool route in a record: its channel as an object, and its own reasoning effort.
 * @param {Route} r
 */
const routeId = (r) => ({ ...channelId(r), ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) });

/**
 * An ISO time for any number the module may answer, or undefined: nothing
 * here may throw (a throw would skip the rest of the step's effects).
 */
/** @param {number} ms */
export function isoTime(ms) {
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : undefined;
}

/**
 * Where a failover or give-up happened: the agent's turn and step (the host's)
 * and its failover count against the bound (the module's), each only when known.
 */
function progress(fx, env) {
  const out = {};
  try {
    const where = env.where?.(fx.agent) ?? {};
    if (where.turn !== undefined) out.turn = where.turn;
    if (where.step !== undefined) out.step = where.step;
    if (fx.failovers > 0) {
      out.failovers = fx.failovers;
      const max = env.maxFailovers?.();
      if (Number.isSafeInteger(max)) out.maxFailovers = max;
    }
  } catch {
    // a record without its place is still the record
  }
  return out;
}

/** Cordis events this plugin emits, with the effect that causes each. */
export const EVENTS = /** @type {const} */ ({
  circuitOpened: 'dsh-resilience/circuit-opened',
  circuitClosed: 'dsh-resilience/circuit-closed',
  failover: 'dsh-resilience/failover',
  giveUp: 'dsh-resilience/give-up',
  spill: 'dsh-resilience/spill',
  probe: 'dsh-resilience/probe',
  stall: 'dsh-resilience/stall',
  slow: 'dsh-resilience/slow',
  toolRetry: 'dsh-resilience/tool-retry',
});

/**
 * What carryOut needs: `ctx`, `audit`, `logger`, and the shell's own actions.
 * @typedef {object} EffectEnv
 * @property {Pick<Context, 'emit'>} ctx
 * @property {{write(record: object): unknown}} audit
 * @property {{info(...args: unknown[]): void, warn(...args: unknown[]): void}} logger
 * @property {(atMs: number) => void} scheduleWake
 * @property {(channel: Channel) => void} probe
 * @property {() => void} healthChanged
 * @property {(agent: string) => void} [cutWait] - ends that agent's held wait now (a wait-cut effect)
 * @property {(fx: Effect) => void} [observe] - sees every effect before it is carried out (the web view)
 * @property {(agent: string) => {turn?: number, step?: number}} [where] - the host's turn and step of the agent's request (turns.js)
 * @property {() => number | undefined} [maxFailovers] - the configured bound, for "failover n/max"
 * @property {(record: object) => void} [notice] - the headless one-line notice (notice.js)
 * @property {import('./quota.js').QuotaRules} [quota] - long-term waits, routes,
 *   balance scripts (quota.js, which emits its own events).
 */

/**
 * The quota rules, there whenever the module answers a quota effect (it
 * answers none without them). A cast only: an env without them throws as before.
 * @param {EffectEnv} env
 */
const quotaOf = (env) => /** @type {import('./quota.js').QuotaRules} */ (env.quota);

/**
 * @param {Effect[]} effects - the module's effects, in order.
 * @param {EffectEnv} env
 */
export function carryOut(effects, env) {
  const { ctx, audit, logger } = env;
  for (const fx of effects) {
    try {
      env.observe?.(fx);
    } catch (e) {
      logger.warn('an effect observer failed: %s', e?.message ?? e); // a view never costs a decision
    }
    /** @type {object} */
    let record;
    /** @type {(typeof EVENTS)[keyof typeof EVENTS] | undefined} */
    let event;
    switch (fx.kind) {
      case 'circuit':
        record = { type: `circuit-${fx.to}`, channel: channelId(fx.channel), from: fx.from, cause: fx.cause, class: fx.class, openUntil: fx.openUntilMs ? isoTime(fx.openUntilMs) : undefined };
        if (fx.to === 'open') event = EVENTS.circuitOpened;
        if (fx.to === 'closed') event = EVENTS.circuitClosed;
        logger.info('circuit %s: %s -> %s (%s)', ch(fx.channel), fx.from, fx.to, fx.cause);
        env.healthChanged(); // a provider's exhaustion mark is in its record: saved and shared with it
        break;
      case 'schedule-wake':
        env.scheduleWake(fx.atMs);
        continue; // timer bookkeeping: not worth an audit line
      case 'probe':
        // Announced (EVENTS.probe) with its outcome, when the probe settles.
        record = { type: 'probe', channel: channelId(fx.channel) };
        env.probe(fx.channel);
        break;
      case 'effort-dropped':
        record = { type: 'effort-dropped', agent: fx.agent, channel: channelId(fx.channel), effort: fx.effort };
        logger.info('dropping reasoningEffort %s: %s does not list it', fx.effort, ch(fx.channel));
        break;
      case 'failover':
        record = { type: 'failover', agent: fx.agent, from: channelId(fx.from), to: channelId(fx.to), code: fx.code, class: fx.class, ...progress(fx, env) };
        event = EVENTS.failover;
        logger.info('failover %s -> %s on %s (%s)', ch(fx.from), ch(fx.to), fx.code, fx.class);
        env.quota?.noteHome(fx.agent, fx.home ?? fx.from); // kept for a restarted host until the return
        break;
      case 'returned':
        // The module's word that the session is home again: the return row,
        // also after a restart (the module was told the home at bring-up).
        // The only source of return rows: nothing infers one from routes.
        // Its channels stay "provider/model" text: the webhook and telemetry
        // contracts document them so (docs/telemetry.md).
        record = { type: 'return', agent: fx.agent, from: ch(fx.from), to: ch(fx.to) };
        logger.info('return %s -> %s', ch(fx.from), ch(fx.to));
        env.quota?.noteHome(fx.agent, undefined);
        break;
      case 'session-route':
        record = { type: 'session-pick', agent: fx.agent, pick: fx.pick && channelId(fx.pick), home: fx.home && channelId(fx.home) };
        env.quota?.noteRoute(fx.agent, fx.home, fx.pick);
        break;
      case 'retry':
        record = { type: 'retry', agent: fx.agent, channel: channelId(fx.channel), attempt: fx.attempt, delayMs: fx.delayMs, code: fx.code };
        logger.info('retry %s #%d in %d ms on %s', ch(fx.channel), fx.attempt, fx.delayMs, fx.code);
        break;
      case 'give-up': {
        const tried = (fx.tried ?? []).map((t) => ({ channel: channelId(t.channel), code: t.code }));
        record = { type: 'give-up', agent: fx.agent, channel: channelId(fx.channel), reason: fx.reason, code: fx.code, tried: tried.length ? tried : undefined, ...progress(fx, env) };
        event = EVENTS.giveUp;
        logger.info('give up on %s: %s (%s)%s', ch(fx.channel), fx.reason, fx.code,
          tried.length ? `; tried ${(fx.tried ?? []).map((t) => `${ch(t.channel)} (${t.code})`).join(', ')}` : '');
        break;
      }
      case 'spill':
        record = { type: 'spill', agent: fx.agent, from: channelId(fx.from), to: channelId(fx.to), code: fx.code, failures: fx.failures };
        event = EVENTS.spill;
        logger.info('spill %s -> %s after %d failures (%s)', ch(fx.from), ch(fx.to), fx.failures, fx.code);
        env.healthChanged(); // `from`'s burst grew, with no transition: the next process goes on from it
        break;
      case 'skipped-too-small':
        record = { type: 'skipped-too-small', agent: fx.agent, channel: channelId(fx.channel), contextTokens: fx.contextTokens, contextWindow: fx.contextWindow, usable: fx.usable };
        logger.info('%s skipped for %s: %d context tokens, window %d (%d usable)', ch(fx.channel), fx.agent, fx.contextTokens, fx.contextWindow, fx.usable);
        break;
      case 'wait-cut':
        record = { type: 'wait-cut', agent: fx.agent, channel: channelId(fx.channel) };
        logger.info('wait of %s cut: %s is usable again', fx.agent, ch(fx.channel));
        env.cutWait?.(fx.agent);
        break;
      case 'unroutable':
        record = { type: 'unroutable', keys: fx.keys, channel: channelId(fx.channel), code: fx.code };
        logger.warn('dsh-resilience: %s (%s) cannot be served by this host (%s): it is never failed over to', fx.keys.join(', ') || 'a target', ch(fx.channel), fx.code);
        break;
      case 'routable':
        record = { type: 'routable', keys: fx.keys, channel: channelId(fx.channel) };
        logger.info('%s (%s) can be served again', fx.keys.join(', ') || 'a target', ch(fx.channel));
        break;
      case 'stall':
        record = { type: 'stall', route: channelId(fx.channel), purpose: fx.purpose, bound: fx.bound, silenceMs: fx.silenceMs, limitMs: fx.limitMs, chunks: fx.chunks };
        event = EVENTS.stall;
        logger.info('stalled stream cut on %s: no output for %d ms (%s limit %d ms)', ch(fx.channel), fx.silenceMs, fx.bound, fx.limitMs);
        break;
      case 'slow': {
        // The slow-call breaker (policy/slow.go): slow, its half-open probe, closed by a fast call.
        const type = fx.to === 'slow' ? 'slow' : fx.to === 'half-open' ? 'slow-probe' : 'slow-closed';
        record = { type, channel: channelId(fx.channel), from: fx.from, agent: fx.agent, firstTokenMs: fx.firstTokenMs, estimateMs: fx.estimateMs, limitMs: fx.limitMs, calls: fx.calls };
        event = EVENTS.slow;
        logger.info('slow-call breaker %s: %s -> %s (first token %s ms, estimate %d ms, limit %d ms)', ch(fx.channel), fx.from, fx.to, fx.firstTokenMs ?? '-', fx.estimateMs, fx.limitMs);
        env.healthChanged();
        break;
      }
      case 'tool-retry': // tools.js: tool, call, attempt, outcome, reason, delay; no arguments or output
        record = toolAuditRecord(fx);
        event = EVENTS.toolRetry;
        logger.info('tool %s (%s): %s after attempt %d (%s)', fx.tool, fx.call, fx.outcome, fx.attempt, fx.reason ?? 'ok');
        break;
      case 'quota-wait':
        record = { type: `quota-wait-${fx.phase}`, agent: fx.agent, provider: fx.provider, pool: fx.pool, reason: fx.reason, attempts: fx.attempts, nextAttemptAt: fx.phase === 'left' ? undefined : new Date(fx.nextAttemptAtMs).toISOString() };
        logger.info('quota wait %s for %s on %s (%d attempts)', fx.phase, fx.agent, fx.provider, fx.attempts);
        quotaOf(env).onWait(fx);
        break;
      case 'quota-routed':
        record = { type: 'quota-routed', agent: fx.agent, pool: fx.pool, from: fx.from && routeId(fx.from), to: routeId(fx.to), cause: fx.cause };
        quotaOf(env).onRouted(fx);
        break;
      case 'quota-session':
        record = { type: 'quota-session', agent: fx.agent, enabled: fx.enabled, enabledSource: fx.enabledSource, pool: fx.pool, poolSource: fx.poolSource, route: fx.route && routeId(fx.route) };
        break;
      case 'refresh-balance':
        quotaOf(env).refresh(fx.provider); // audited with its reading
        continue;
      case 'schedule-refresh':
        quotaOf(env).scheduleRefresh(fx.atMs);
        continue;
      default:
        throw new Error(`dsh-resilience: unknown effect kind "${/** @type {{kind: string}} */ (fx).kind}"`);
    }
    audit.write(record);
    if (fx.kind === 'failover' || fx.kind === 'spill' || fx.kind === 'give-up') env.notice?.(record); // notice.js: headless stderr
    if (event) {
      try {
        ctx.emit(event, { ...fx });
      } catch (e) {
        logger.warn('a %s listener failed: %s', event, e?.message ?? e);
      }
      emitCompat(ctx, event, fx, logger);
    }
  }
}
