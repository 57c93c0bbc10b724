// @ts-check
// An inter-process lock for the plugin's shared files: an `O_EXCL` lock file
// beside the file it guards, with stale-lock recovery.
//
// Why not a lock library: the default install must pull in nothing, and the
// well-kept one (proper-lockfile) brings three dependencies for the same
// scheme (an exclusive create, an age to call a lock stale). Node has no
// flock(2). The lock is held for milliseconds (one read-merge-write of a file
// of a few KB, or one audit rotation), so a lock older than `staleMs`, or one
// whose holder on this machine is gone, belongs to a crashed process.
//
// Taking over a stale lock is itself a race (two waiters both see it stale).
// The stale file is renamed away, which only one of them can do to the same
// inode; a waiter that finds it renamed a fresh lock instead (its inode
// differs from the stale one it judged) links it back and waits.
import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';

export const DEFAULT_STALE_MS = 10_000;
export const DEFAULT_WAIT_MS = 15_000;

export class LockTimeout extends Error {
  constructor(path, ms) {
    super(`could not take ${path} within ${ms} ms`);
    this.name = 'LockTimeout';
  }
}

const HOST = hostname();
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether a process with this pid runs on this machine. */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM'; // exists, owned by someone else
  }
}

/**
 * Runs task while holding the lock file at path.
 * @template T
 * @param {string} path - the lock file (e.g. `health.json.lock`).
 * @param {() => Promise<T>} task
 * @param {{staleMs?: number, waitMs?: number}} [o]
 * @returns {Promise<T>}
 * @throws {LockTimeout} when the lock stays taken longer than waitMs.
 */
export async function withLock(path, task, { staleMs = DEFAULT_STALE_MS, waitMs = DEFAULT_WAIT_MS } = {}) {
  const ino = await acquire(path, staleMs, waitMs);
  try {
    return await task();
  } finally {
    await release(path, ino);
  }
}

async function acquire(path, staleMs, waitMs) {
  const started = Date.now();
  for (let round = 0; ; round++) {
    try {
      const fh = await open(path, 'wx', 0o600);
      try {
        await fh.writeFile(`${process.pid} ${HOST} ${Date.now()}\n`);
        return (await fh.stat()).ino;
      } finally {
        await fh.close();
      }
    } catch (e) {
      if (e.code !== 'EEXIST') throw e;
    }
    await recoverStale(path, staleMs);
    if (Date.now() - started > waitMs) throw new LockTimeout(path, waitMs);
    await pause(Math.min(50, 2 + round) * (0.5 + Math.random()));
  }
}

async function recoverStale(path, staleMs) {
  let st, text;
  try {
    st = await stat(path);
    text = await readFile(path, 'utf8');
  } catch {
    return; // released meanwhile
  }
  const [pid, host] = text.split(' ');
  const gone = host === HOST && Number(pid) > 0 && !alive(Number(pid));
  // An empty file is a holder between its create and its write: young, not stale.
  if (!gone && Date.now() - st.mtimeMs < staleMs) return;
  const away = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    await rename(path, away);
  } catch {
    return; // another waiter took it over first
  }
  const moved = await stat(away).catch(() => undefined);
  if (moved && moved.ino !== st.ino) {
    // The stale lock was replaced by a live one before our rename: put it back.
    await link(away, path).catch(() => {});
  }
  await unlink(away).catch(() => {});
}

async function release(path, ino) {
  // Only our own lock: after a long stall it may have been taken over.
  const st = await stat(path).catch(() => undefined);
  if (st?.ino === ino) await unlink(path).catch(() => {});
}
