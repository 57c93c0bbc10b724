// Where the llmQuotaRetry service and its events meet the quota plugin's
// documented contract (dsh-llm-quota-retry), so its callers work unchanged:
//
// - `stateOf(session)` is undefined outside a long-term wait. Inside one it is
//   a frozen `{pending, retrying: true, attempts, enteredAt, nextAttemptAt,
//   at, provider, pool, turn, step}`: `pending` is true while the wait's timer
//   runs and false once its attempt is sent (the wait ends when that attempt
//   is seen succeeding, or is given up); `at` is when the next attempt is due
//   (the same time as `nextAttemptAt`).
// - `setPool(session, null)` opts the session out (pool `off`), as the quota
//   plugin documents it. `'default'` (or undefined) hands the session back to
//   the row's default; a pool name puts it in that pool.
// - `entered` carries `pending`/`retrying: true` and `at` (the next attempt);
//   `left` carries `pending`/`retrying: false`, `at` (when it left) and
//   `durationMs` (how long the wait lasted); `failover` carries `at`.

/** The flags a caller reads for "in a long-term retry". */
export const WAITING = Object.freeze({ pending: true, retrying: true });

/**
 * The fields a `left` event adds: the flags off, its time and the wait's length.
 * @param {number} enteredAtMs
 * @param {number} leftAtMs
 */
export function leftFields(enteredAtMs, leftAtMs) {
  const durationMs = Number.isFinite(enteredAtMs) && enteredAtMs > 0 ? Math.max(0, leftAtMs - enteredAtMs) : undefined;
  return { pending: false, retrying: false, at: leftAtMs, durationMs };
}

/**
 * The service's `setPool` argument as the shell's own: null is the opt-out.
 * @param {unknown} pool - as the service's caller gave it
 */
export function servicePoolArg(pool) {
  if (pool === null) return 'off';
  if (pool === undefined) return 'default';
  return String(pool);
}
