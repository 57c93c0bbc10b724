// @ts-check
// Exhaustion marks used to live in their own file, `quota-marks.json`
// (`{"marks": {provider: {markedAtMs, untilMs, liftedAtMs?, v}}}`), re-told to
// the module at every start. They now travel in the provider's health record
// (`markedAtMs`, policy/merge.go), so health.json and Redis carry them. This
// folds a file an older version left into health once, at start, and renames
// it `quota-marks.json.migrated` so it is never read again. Only a config with
// the quota rules folds it: without them the old version ignored it too, and
// it waits for a config that has them.
import { readFile, rename } from 'node:fs/promises';
import { now as clockNow } from './clock.js';

/** @import { ChannelHealth } from './policy-types.js' */

/**
 * The provider records that carry the live, unlifted marks of an old file,
 * each built on the module's own record for that provider (so it keeps its
 * counts) and one version above it (so the merge takes it, here and on every
 * host it reaches). A provider already marked at least as long is left alone.
 * @param {Record<string, any>} marks - the file's `marks`.
 * @param {ChannelHealth[]} channels - the module's health now.
 * @param {number} nowMs
 * @returns {ChannelHealth[]}
 */
export function markRecords(marks, channels, nowMs) {
  /** @type {ChannelHealth[]} */
  const out = [];
  for (const [provider, m] of Object.entries(marks ?? {})) {
    const at = Number(m?.markedAtMs);
    const until = Number(m?.untilMs);
    if (!provider || !Number.isSafeInteger(at) || !Number.isSafeInteger(until) || at < 0 || until <= nowMs) continue;
    if (Number(m?.liftedAtMs) >= at) continue; // lifted after it was set
    const own = channels.find((c) => c.channel.provider === provider && c.channel.model === '*');
    if (own?.markedAtMs && own.state === 'open' && own.openUntilMs >= until) continue;
    const long = own && own.state === 'open' && own.openUntilMs >= until;
    out.push({
      channel: { provider, model: '*' },
      state: 'open',
      failures: own?.failures ?? 0,
      opens: own?.opens ?? 0,
      openUntilMs: long ? own.openUntilMs : until,
      lastCode: own?.lastCode ?? '',
      changedAtMs: long ? own.changedAtMs ?? at : Math.min(at, nowMs),
      version: (own?.version ?? 0) + 1,
      markedAtMs: Math.min(at, nowMs),
    });
  }
  return out;
}

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
  /** @type {ChannelHealth[]} */
  let records = [];
  let reason;
  try {
    records = markRecords(JSON.parse(text)?.marks, policy.snapshot()?.channels ?? [], nowMs);
  } catch (e) {
    reason = `did not parse: ${String(e?.message ?? e).slice(0, 200)}`;
  }
  let adopted = 0;
  if (records.length > 0) {
    try {
      adopted = policy.restore(JSON.stringify({ channels: records }), nowMs).adopted;
    } catch (e) {
      reason = String(e?.message ?? e).slice(0, 200);
    }
  }
  // Renamed, not deleted: the file is the user's to remove.
  await rename(path, `${path}.migrated`).catch(() => {}); // another host process may have renamed it first
  report({ type: 'quota-marks-migrated', file: path, marks: adopted, providers: records.map((r) => r.channel.provider), ...(reason ? { reason } : {}) });
  return adopted > 0;
}
