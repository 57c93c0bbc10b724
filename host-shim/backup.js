// @ts-check
// The user's backup choice (`/resilience backup`) outlives the process: it is
// a preference, not a health fact, so it gets a file of its own, written like
// every state file (store.js: locked, temp + rename, a corrupt file set
// aside). Clearing writes `channel: null`, so the file's version `v` (bumped
// by every write) still tells which choice came last. An unreadable file is
// ignored (and audited): no backup is the safe default.
import { StateFile } from './store.js';

const file = (path, audit = () => {}) => new StateFile(path, { audit, setAside: { type: 'backup-set-aside' } });
const valid = (c) => typeof c?.provider === 'string' && c.provider !== '' && typeof c?.model === 'string' && c.model !== '';

/** @returns {Promise<{provider: string, model: string} | undefined>} */
export async function loadBackup(path, audit) {
  let doc;
  try {
    doc = await file(path, audit).load();
  } catch (e) {
    audit({ type: 'backup-ignored', reason: String(e?.message ?? e).slice(0, 200) });
    return undefined;
  }
  if (doc === undefined || doc?.channel === null) return undefined;
  if (valid(doc?.channel)) return { provider: doc.channel.provider, model: doc.channel.model };
  audit({ type: 'backup-ignored', reason: 'no {channel: {provider, model}}' });
  return undefined;
}

/** Writes the choice (undefined: no backup); throws when it cannot. */
export async function saveBackup(path, channel, audit) {
  await file(path, audit).update((doc) => ({
    channel: channel ? { provider: channel.provider, model: channel.model } : null,
    v: (Number.isSafeInteger(doc?.v) ? doc.v : 0) + 1,
  }));
}
