// @ts-check
// The host's telemetry seam (`sessionTelemetry`, from
// @deepseek-ai/dsh-session-telemetry; the host's OTel backend exports it over
// OTLP/HTTP): every audit record an operator may alert on is handed to it as
// one operational record. One record in, one record out: the shim infers
// nothing, it only maps fields the audit record already holds (channels,
// codes, classes, reasons, timings; never prompt text or credentials).
//
// The service is optional, read at each record the way the host's own
// /feedback command reads it (ctx.get): absent, nothing happens. The OTel
// backend takes direct records only in its FULL mode; in its other modes
// emit() is a no-op by its own design. emit() is a non-blocking enqueue by the
// seam's contract, and a throwing backend is contained here: telemetry never
// costs a decision or an audit line.

/** @import { AuditRecord } from './audit-types.js' */

/**
 * The audit record types that reach telemetry, each with its severity.
 * @type {Readonly<Record<string, 'info' | 'warn' | 'error'>>}
 */
export const TELEMETRY_SEVERITY = Object.freeze({
  'circuit-open': 'warn',
  'circuit-half-open': 'info',
  'circuit-closed': 'info',
  failover: 'info',
  return: 'info',
  retry: 'info', // a wait on the same channel
  'give-up': 'error',
  spill: 'info', // a request's next attempt sent at once to the next target (spillAfter)
  'quota-routed': 'info', // a spill to another route of the pool
  'quota-wait-entered': 'info',
  'quota-wait-waiting': 'info',
  'quota-wait-left': 'info',
  'tool-retry': 'info',
  'tool-exhausted': 'info',
  'tool-recovered': 'info',
  'tool-failed': 'info',
  stall: 'info',
  slow: 'info',
  'slow-probe': 'info',
  'slow-closed': 'info',
  hedge: 'info', // a request slow to its first token also sent to the failover target
});

/** The seam's operation attribute: receivers filter on it (the host's own are agent-error, shutdown). */
export const OP_PREFIX = 'dsh-resilience.';

/**
 * @param {unknown} c
 * @returns {c is {provider: string, model?: unknown}}
 */
const isChannel = (c) => c !== null && typeof c === 'object' && typeof /** @type {{provider?: unknown}} */ (c).provider === 'string';
/**
 * A channel as attributes: an object or the "provider/model" text some records hold.
 * @param {string} prefix
 * @param {unknown} c
 * @param {Record<string, string | number>} out
 */
function channelAttrs(prefix, c, out) {
  if (isChannel(c)) {
    out[`${prefix}.provider`] = c.provider;
    if (typeof c.model === 'string') out[`${prefix}.model`] = c.model;
  } else if (typeof c === 'string' && c !== '') {
    out[prefix] = c;
  }
}

/** Scalar fields copied as they are, under the attribute name a collector filters on. @type {Record<string, string>} */
const SCALARS = {
  code: 'error.code',
  class: 'error.class',
  reason: 'resilience.reason',
  cause: 'resilience.cause',
  from: 'circuit.from', // a breaker's previous state (a string); channels are handled below
  openUntil: 'circuit.open_until',
  attempt: 'resilience.attempt',
  attempts: 'resilience.attempts',
  failures: 'resilience.failures',
  delayMs: 'resilience.delay_ms',
  pool: 'quota.pool',
  provider: 'quota.provider',
  nextAttemptAt: 'quota.next_attempt_at',
  tool: 'tool.name',
  call: 'tool.call_id',
  bound: 'stall.bound',
  silenceMs: 'stall.silence_ms',
  limitMs: 'stall.limit_ms',
  chunks: 'stall.chunks',
  purpose: 'stall.purpose',
  winner: 'hedge.winner',
  end: 'hedge.end',
  afterMs: 'hedge.after_ms',
  loserWaitMs: 'hedge.loser_wait_ms',
  savedMs: 'hedge.saved_ms',
};

/**
 * The seam record an audit record means, or undefined for types that are not
 * alerting signals. Pure.
 * @param {AuditRecord} record - an audit record as written (with `at`, when it has one).
 * @param {number} nowMs - the time to use when the record has no `at`.
 */
export function telemetryRecord(record, nowMs) {
  const severity = TELEMETRY_SEVERITY[record?.type];
  if (!severity) return undefined;
  /** @type {Record<string, string | number>} */
  const attributes = { 'telemetry.op': OP_PREFIX + record.type, 'resilience.type': record.type };
  // The host requires an agent's id to equal its session's id.
  if (record.agent !== undefined) {
    attributes['session.id'] = String(record.agent);
    attributes['agent.id'] = String(record.agent);
  }
  channelAttrs('channel', record.channel ?? record.route, attributes);
  if (isChannel(record.from) || record.type === 'return' || record.type === 'spill') channelAttrs('from', record.from, attributes);
  channelAttrs('to', record.to, attributes);
  for (const [field, name] of Object.entries(SCALARS)) {
    if (field === 'from' && !record.type.startsWith('circuit-')) continue;
    const v = record[field];
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) attributes[name] = v;
  }
  if (typeof record.turn === 'number') attributes.turn = record.turn;
  if (typeof record.step === 'number') attributes.step = record.step;
  const at = Date.parse(record.at ?? ''); // none: NaN, as for an unreadable one
  const { at: _at, ...body } = record;
  return { channel: 'ops', time: Number.isFinite(at) ? at : nowMs, severity, attributes, body };
}

/**
 * A listener for audit records that hands each alerting one to the host's
 * telemetry service when it is mounted.
 * @param {{get: (name: string) => any}} ctx
 */
export function telemetrySink(ctx, now = Date.now) {
  return (/** @type {AuditRecord} */ record) => {
    try {
      const service = ctx.get('sessionTelemetry');
      if (typeof service?.emit !== 'function') return;
      const out = telemetryRecord(record, now());
      if (out) service.emit(out);
    } catch { /* telemetry never costs a record */ }
  };
}
