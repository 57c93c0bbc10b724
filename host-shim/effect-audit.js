// @ts-check
// The audit subscriber: each effect's audit record and log line as the module
// gives them (its `audit`: plugin/codec/audit.go, the contract of
// docs/audit.md), the headless notice for a channel switch or a give-up,
// and the webhook notification the module says a record means (notify.js).
// The shim adds only what the host knows and the module never holds: the
// turn and step of the agent's request (turns.js), where the module asks for
// them. An effect without `audit` is not audited (timer bookkeeping, balance
// runs): the module decides, and a Go test holds every effect kind to a
// decision (plugin/codec/audit_test.go).

/** @import { AuditEntry, Effect, LogLine, Notification } from './policy-types.js' */

/**
 * What the audit subscriber needs.
 * @typedef {object} AuditEnv
 * @property {{write(record: object): unknown}} audit
 * @property {{info(...args: unknown[]): void, warn(...args: unknown[]): void}} logger
 * @property {(agent: string) => {turn?: number, step?: number}} [where] - the host's turn and step of the agent's request (turns.js)
 * @property {(record: object) => void} [notice] - the headless one-line notice (notice.js)
 * @property {(n: Notification, type: string) => void} [notify] - the webhooks' sender (notify.js)
 */

/**
 * The host's turn and step of the agent's request, each only when known.
 * @param {unknown} agent
 * @param {Pick<AuditEnv, 'where'>} env
 */
function hostTurn(agent, env) {
  /** @type {{turn?: number, step?: number}} */
  const out = {};
  try {
    const where = env.where?.(String(agent)) ?? {};
    if (where.turn !== undefined) out.turn = where.turn;
    if (where.step !== undefined) out.step = where.step;
  } catch {
    // a record without its place is still the record
  }
  return out;
}

/**
 * An effect's audit record and log line, as the module gave them; undefined for an effect not audited.
 * @param {Effect} fx
 * @param {Pick<AuditEnv, 'where'>} env - where the host's turn and step come from
 * @returns {{record: {type: string, [field: string]: unknown}, log?: LogLine | null, notify?: Notification | null} | undefined}
 */
export function recordOf(fx, env) {
  const entry = /** @type {{audit?: AuditEntry | null}} */ (fx).audit;
  if (!entry) return undefined;
  // An object already: the step output's one JSON.parse made it (never mutated here, only spread).
  const record = /** @type {{type: string, [field: string]: unknown}} */ (entry.record);
  return { record: entry.hostTurn ? { ...record, ...hostTurn(record.agent, env) } : record, log: entry.log, notify: entry.notify };
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
    if (out.log) env.logger[out.log.level]('%s', out.log.text); // the text is the module's: never a format
    env.audit.write(out.record);
    if (NOTICED.has(fx.kind)) env.notice?.(out.record);
    if (out.notify) env.notify?.(out.notify, out.record.type); // after the record: a failed send's line follows it
  };
}
