// @ts-check
// Atomic JSON state files (backup, quota settings and marks): written to a
// temp file beside the target and renamed over it, so a reader (another host
// process) never sees half a document. Like every state file they are the
// user's only: 0600 in a 0700 directory. (health.json does the same under its
// own lock: health.js.)
import { randomBytes } from 'node:crypto';
import { mkdir, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Writes value as JSON to path atomically, creating its directory. */
export async function writeJsonAtomic(path, value) {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify(value) + '\n', { mode: 0o600 });
    await rename(tmp, path);
  } catch (e) {
    await unlink(tmp).catch(() => {});
    throw e;
  }
}
