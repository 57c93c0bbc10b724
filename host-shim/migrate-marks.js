// @ts-check
// Exhaustion marks used to live in their own file, `quota-marks.json`. They
// now travel in the provider's health record, so health.json and Redis carry
// them. At start this hands a file an older version left to the module,
// which folds its live marks into health (WIT `fold-marks`,
// policy/oldmarks.go), and renames it `quota-marks.json.migrated` so it is
// never read again. Only a config with the quota rules folds it: without
// them the old version ignored it too, and it waits for a config that has
// them.
import { readFile, rename } from 'node:fs/promises';
import { now as clockNow } from './clock.js';

/**
 * Folds an old `quota-marks.json` into the module's health once.
 * @param {string} path - the old marks file.
 * @param {import('./engine.js').Engine} policy
 * @param {(record: object) => void} report - the audit log.
 * @returns {Promise<boolean>} whether health changed (the caller saves and shares it).
 */
export async function migrateMarks(path, policy, report, nowMs = clockNow()) {
  if (policy.resolved.quota?.active !== true) return false;
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e?.code !== 'ENOENT') report({ type: 'quota-marks-migrated', file: path, marks: 0, reason: String(e?.message ?? e).slice(0, 200) });
    return false;
  }
  const folded = policy.ask('fold-marks', { nowMs: Math.max(0, Math.floor(nowMs)), text });
  // Renamed, not deleted: the file is the user's to remove.
  await rename(path, `${path}.migrated`).catch(() => {}); // another host process may have renamed it first
  const reason = folded ? folded.problem : 'the policy module did not answer';
  report({ type: 'quota-marks-migrated', file: path, marks: folded?.adopted ?? 0, providers: folded?.providers ?? [], ...(reason ? { reason } : {}) });
  return (folded?.adopted ?? 0) > 0;
}
