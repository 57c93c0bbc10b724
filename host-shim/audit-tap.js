// @ts-check
// Listeners on the audit log: the telemetry seam and the web page follow the
// records the shim writes, after each is queued, and a listener's failure
// never costs the record. They see what the log sees, nothing the policy did
// not already say. (The webhooks follow the module's word on an audit entry
// instead: effect-audit.js, notify.js.)

/** @import { AuditRecord } from './audit-types.js' */

/**
 * Wraps an audit writer (AuditLog or a tap of it) so each record also goes to
 * `listeners`, with the time the log gives it.
 * @param {{write: (r: object) => Promise<void>, flush: () => Promise<void>, failures?: number}} log
 * @param {((record: AuditRecord) => void)[]} listeners
 */
export function tapAudit(log, listeners) {
  return {
    /** @param {object} record */
    write: (record) => {
      const written = log.write(record);
      const seen = /** @type {AuditRecord} */ ({ at: new Date().toISOString(), ...record }); // the writer checked its type
      for (const listen of listeners) {
        try {
          listen(seen);
        } catch { /* a listener never costs a record */ }
      }
      return written;
    },
    flush: () => log.flush(),
    get failures() { return log.failures; },
  };
}
