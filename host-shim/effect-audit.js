// @ts-check
// The audit subscriber: each effect as its audit record and its log line,
// and the headless notice for a channel switch or a give-up. The one table
// of effect kinds to records (host-shim/audit-types.js defines the types).
// A kind with no record (timer bookkeeping, balance runs) is skipped; a kind
// this shim does not know throws, so a contract change is never silent.

import { channelId, channelText } from './channel.js';
import { isoTime } from './text.js';
import { toolAuditRecord } from './tools.js';

/** @import { Channel, Effect, Route } from './policy-types.js' */

const ch = channelText; // "provider/model" is for people: log lines (channel.js)
/**
 * A pool route in a record: its channel as an object, and its own reasoning effort.
 * @param {Route} r
 */
const routeId = (r) => ({ ...channelId(r), ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) });

/**
 * What the audit subscriber needs.
 * @typedef {object} AuditEnv
 * @property {{write(record: object): unknown}} audit
 * @property {{info(...args: unknown[]): void, warn(...args: unknown[]): void}} logger
 * @property {(agent: string) => {turn?: number, step?: number}} [where] - the host's turn and step of the agent's request (turns.js)
 * @property {() => number | undefined} [maxFailovers] - the configured bound, for "failover n/max"
 * @property {(record: object) => void} [notice] - the headless one-line notice (notice.js)
 */

/**
 * Where a failover or give-up happened: the agent's turn and step (the host's)
 * and its failover count against the bound (the module's), each only when known.
 * @param {{agent: string, failovers?: number | null}} fx - a failover or give-up effect
 * @param {Pick<AuditEnv, 'where' | 'maxFailovers'>} env
 */
function progress(fx, env) {
  /** @type {{turn?: number, step?: number, failovers?: number, maxFailovers?: number}} */
  const out = {};
  try {
    const where = env.where?.(fx.agent) ?? {};
    if (where.turn !== undefined) out.turn = where.turn;
    if (where.step !== undefined) out.step = where.step;
    const failovers = /** @type {number} */ (fx.failovers); // absent or null: not above 0
    if (failovers > 0) {
      out.failovers = failovers;
      const max = env.maxFailovers?.();
      if (Number.isSafeInteger(max)) out.maxFailovers = /** @type {number} */ (max);
    }
  } catch {
    // a record without its place is still the record
  }
  return out;
}

/**
 * An effect's audit record and log line; undefined for a kind not audited.
 * @param {Effect} fx
 * @param {Pick<AuditEnv, 'where' | 'maxFailovers'>} env - where the record's progress fields come from
 * @returns {{record: object, log?: ['info' | 'warn', ...unknown[]]} | undefined}
 */
export function recordOf(fx, env) {
  switch (fx.kind) {
    case 'circuit':
      return {
        record: { type: `circuit-${fx.to}`, channel: channelId(fx.channel), from: fx.from, cause: fx.cause, class: fx.class, openUntil: fx.openUntilMs ? isoTime(fx.openUntilMs) : undefined },
        log: ['info', 'circuit %s: %s -> %s (%s)', ch(fx.channel), fx.from, fx.to, fx.cause],
      };
    case 'schedule-wake': // timer bookkeeping: not worth an audit line
    case 'refresh-balance': // audited with its reading (quota.js)
    case 'schedule-refresh':
      return undefined;
    case 'probe': // announced (EVENTS.probe) with its outcome, when the probe settles
      return { record: { type: 'probe', channel: channelId(fx.channel) } };
    case 'effort-dropped':
      return {
        record: { type: 'effort-dropped', agent: fx.agent, channel: channelId(fx.channel), effort: fx.effort },
        log: ['info', 'dropping reasoningEffort %s: %s does not list it', fx.effort, ch(fx.channel)],
      };
    case 'failover':
      return {
        record: { type: 'failover', agent: fx.agent, from: channelId(fx.from), to: channelId(fx.to), code: fx.code, class: fx.class, ...progress(fx, env) },
        log: ['info', 'failover %s -> %s on %s (%s)', ch(fx.from), ch(fx.to), fx.code, fx.class],
      };
    case 'returned':
      // The module's word that the session is home again: the only source of
      // return rows. Its channels stay "provider/model" text: the webhook and
      // telemetry contracts document them so (docs/telemetry.md).
      return {
        record: { type: 'return', agent: fx.agent, from: ch(fx.from), to: ch(fx.to) },
        log: ['info', 'return %s -> %s', ch(fx.from), ch(fx.to)],
      };
    case 'session-route':
      return { record: { type: 'session-pick', agent: fx.agent, pick: fx.pick && channelId(fx.pick), home: fx.home && channelId(fx.home) } };
    case 'retry':
      return {
        record: { type: 'retry', agent: fx.agent, channel: channelId(fx.channel), attempt: fx.attempt, delayMs: fx.delayMs, code: fx.code },
        log: ['info', 'retry %s #%d in %d ms on %s', ch(fx.channel), fx.attempt, fx.delayMs, fx.code],
      };
    case 'give-up': {
      const tried = (fx.tried ?? []).map((t) => ({ channel: channelId(t.channel), code: t.code }));
      return {
        record: { type: 'give-up', agent: fx.agent, channel: channelId(fx.channel), reason: fx.reason, code: fx.code, tried: tried.length ? tried : undefined, ...progress(fx, env) },
        log: ['info', 'give up on %s: %s (%s)%s', ch(fx.channel), fx.reason, fx.code,
          tried.length ? `; tried ${(fx.tried ?? []).map((t) => `${ch(t.channel)} (${t.code})`).join(', ')}` : ''],
      };
    }
    case 'spill':
      return {
        record: { type: 'spill', agent: fx.agent, from: channelId(fx.from), to: channelId(fx.to), code: fx.code, failures: fx.failures },
        log: ['info', 'spill %s -> %s after %d failures (%s)', ch(fx.from), ch(fx.to), fx.failures, fx.code],
      };
    case 'skipped-too-small':
      return {
        record: { type: 'skipped-too-small', agent: fx.agent, channel: channelId(fx.channel), contextTokens: fx.contextTokens, contextWindow: fx.contextWindow, usable: fx.usable },
        log: ['info', '%s skipped for %s: %d context tokens, window %d (%d usable)', ch(fx.channel), fx.agent, fx.contextTokens, fx.contextWindow, fx.usable],
      };
    case 'wait-cut':
      return {
        record: { type: 'wait-cut', agent: fx.agent, channel: channelId(fx.channel) },
        log: ['info', 'wait of %s cut: %s is usable again', fx.agent, ch(fx.channel)],
      };
    case 'unroutable':
      return {
        record: { type: 'unroutable', keys: fx.keys, channel: channelId(fx.channel), code: fx.code },
        log: ['warn', 'dsh-resilience: %s (%s) cannot be served by this host (%s): it is never failed over to', fx.keys.join(', ') || 'a target', ch(fx.channel), fx.code],
      };
    case 'routable':
      return {
        record: { type: 'routable', keys: fx.keys, channel: channelId(fx.channel) },
        log: ['info', '%s (%s) can be served again', fx.keys.join(', ') || 'a target', ch(fx.channel)],
      };
    case 'stall':
      return {
        record: { type: 'stall', route: channelId(fx.channel), purpose: fx.purpose, bound: fx.bound, silenceMs: fx.silenceMs, limitMs: fx.limitMs, chunks: fx.chunks },
        log: ['info', 'stalled stream cut on %s: no output for %d ms (%s limit %d ms)', ch(fx.channel), fx.silenceMs, fx.bound, fx.limitMs],
      };
    case 'slow': {
      // The slow-call breaker (policy/slow.go): slow, its half-open probe, closed by a fast call.
      const type = fx.to === 'slow' ? 'slow' : fx.to === 'half-open' ? 'slow-probe' : 'slow-closed';
      return {
        record: { type, channel: channelId(fx.channel), from: fx.from, agent: fx.agent, firstTokenMs: fx.firstTokenMs, estimateMs: fx.estimateMs, limitMs: fx.limitMs, calls: fx.calls },
        log: ['info', 'slow-call breaker %s: %s -> %s (first token %s ms, estimate %d ms, limit %d ms)', ch(fx.channel), fx.from, fx.to, fx.firstTokenMs ?? '-', fx.estimateMs, fx.limitMs],
      };
    }
    case 'tool-retry': // tools.js: tool, call, attempt, outcome, reason, delay; no arguments or output
      return {
        record: toolAuditRecord(fx),
        log: ['info', 'tool %s (%s): %s after attempt %d (%s)', fx.tool, fx.call, fx.outcome, fx.attempt, fx.reason ?? 'ok'],
      };
    case 'quota-wait':
      return {
        record: { type: `quota-wait-${fx.phase}`, agent: fx.agent, provider: fx.provider, pool: fx.pool, reason: fx.reason, attempts: fx.attempts, nextAttemptAt: fx.phase === 'left' ? undefined : new Date(fx.nextAttemptAtMs).toISOString() },
        log: ['info', 'quota wait %s for %s on %s (%d attempts)', fx.phase, fx.agent, fx.provider, fx.attempts],
      };
    case 'quota-routed':
      return { record: { type: 'quota-routed', agent: fx.agent, pool: fx.pool, from: fx.from && routeId(fx.from), to: routeId(fx.to), cause: fx.cause } };
    case 'quota-session':
      return { record: { type: 'quota-session', agent: fx.agent, enabled: fx.enabled, enabledSource: fx.enabledSource, pool: fx.pool, poolSource: fx.poolSource, route: fx.route && routeId(fx.route) } };
    default:
      throw new Error(`dsh-resilience: unknown effect kind "${/** @type {{kind: string}} */ (fx).kind}"`);
  }
}

/** Effects a headless user hears of on stderr (notice.js). */
const NOTICED = new Set(['failover', 'spill', 'give-up']);

/**
 * The audit log's subscriber: the record written, the line logged, the notice printed.
 * @param {AuditEnv} env
 * @returns {(fx: Effect) => void}
 */
export function auditSubscriber(env) {
  return (fx) => {
    const out = recordOf(fx, env);
    if (!out) return;
    if (out.log) {
      const [level, ...args] = out.log;
      env.logger[level](...args);
    }
    env.audit.write(out.record);
    if (NOTICED.has(fx.kind)) env.notice?.(out.record);
  };
}
