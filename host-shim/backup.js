// @ts-check
// The user's backup choice (`/resilience backup`) outlives the process: it is
// a preference, not a health fact, so it gets a file of its own. An unreadable
// file is ignored (and audited): no backup is the safe default.
import { readFile, rm } from 'node:fs/promises';
import { writeJsonAtomic } from './atomic.js';

/** @returns {Promise<{provider: string, model: string} | undefined>} */
export async function loadBackup(path, audit) {
  let text;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const { channel } = JSON.parse(text);
    if (typeof channel?.provider === 'string' && channel.provider && typeof channel?.model === 'string' && channel.model) {
      return { provider: channel.provider, model: channel.model };
    }
    throw new Error('no {channel: {provider, model}}');
  } catch (e) {
    audit({ type: 'backup-ignored', reason: String(e.message).slice(0, 200) });
    return undefined;
  }
}

export async function saveBackup(path, channel) {
  if (!channel) {
    await rm(path, { force: true });
    return;
  }
  await writeJsonAtomic(path, { channel });
}
