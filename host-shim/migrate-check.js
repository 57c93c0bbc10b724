// Whether the policy module accepts a migrated row: the same check activation
// makes (engine.js), so a printed row that would be refused says so at once.

import { access } from 'node:fs/promises';
import { compileModule, Engine as Policy, WASM_PATH } from './engine.js';

// The keys the shim keeps for itself (row.js splitConfig); the module never sees them.
const SHIM_KEYS = ['stateDir', 'healthRefreshMs', 'shared', 'notice', 'enabled'];
/**
 * Whether a value holds a `!!js` expression anywhere.
 * @param {unknown} v
 * @returns {boolean}
 */
const hasExpr = (v) => v !== null && typeof v === 'object' && (typeof /** @type {{__jsExpr?: unknown}} */ (v).__jsExpr === 'string' || Object.values(v).some(hasExpr));

/**
 * @param {Record<string, unknown>} row - the migrated row's config
 * @returns {Promise<{ok: true} | {ok: false, error: string} | {skipped: string}>}
 */
export async function checkRow(row) {
  if (hasExpr(row)) return { skipped: 'the row holds !!js expressions, which only the host evaluates' };
  try {
    await access(WASM_PATH);
  } catch {
    return { skipped: 'build/dsh-resilience.wasm is not here' };
  }
  const policyPart = Object.fromEntries(Object.entries(row).filter(([k]) => !SHIM_KEYS.includes(k)));
  try {
    new Policy(await compileModule(), policyPart, { warn() {} }); // eslint-disable-line no-new
    return { ok: true };
  } catch (e) {
    return { ok: false, error: e.message };
  }
}
