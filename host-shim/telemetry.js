// @ts-check
// The host's telemetry seam (`sessionTelemetry`, from
// @deepseek-ai/dsh-session-telemetry; the host's OTel backend exports it over
// OTLP/HTTP): every audit record an operator may alert on is handed to it as
// one operational record. Which records, their severity and their
// attributes are the module's (WIT `telemetry`, policy/telemetry); the sink
// reads the service, asks, and emits with the record as the body.
//
// The service is optional, read at each record the way the host's own
// /feedback command reads it (ctx.get): absent, nothing happens. The OTel
// backend takes direct records only in its FULL mode; in its other modes
// emit() is a no-op by its own design. emit() is a non-blocking enqueue by the
// seam's contract, and a throwing backend or module is contained here:
// telemetry never costs a decision or an audit line.
import { TELEMETRY_TYPES } from './policy-defaults.js';

/** @import { AuditRecord } from './audit-types.js' */

/** Asked about only these: not about every decision's input record. */
const TYPES = new Set(TELEMETRY_TYPES);

/**
 * A listener for audit records that hands each alerting one to the host's
 * telemetry service when it is mounted.
 * @param {{get: (name: string) => any}} ctx
 * @param {() => import('./engine.js').Engine | undefined} engine - the module that maps a record
 */
export function telemetrySink(ctx, engine, now = Date.now) {
  return (/** @type {AuditRecord} */ record) => {
    try {
      if (!TYPES.has(record?.type)) return;
      const service = ctx.get('sessionTelemetry');
      if (typeof service?.emit !== 'function') return;
      const seam = engine()?.ask('telemetry', { record, nowMs: now() })?.seam;
      if (!seam) return;
      const { at: _at, ...body } = record;
      service.emit({ channel: 'ops', ...seam, body });
    } catch { /* telemetry never costs a record */ }
  };
}
