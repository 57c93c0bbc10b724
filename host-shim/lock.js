// @ts-check
// An inter-process lock for the plugin's shared files: a lock file beside
// the file it guards, created exclusively, with stale-lock recovery.
//
// Why not a lock library: the default install must pull in nothing, and the
// well-kept one (proper-lockfile) brings three dependencies for the same
// scheme (an exclusive create, an age to call a lock stale). Node has no
// flock(2). The lock is held for milliseconds (one read-merge-write of a file
// of a few KB, or one audit rotation), so a lock older than `staleMs`, or one
// whose holder on this machine is gone, belongs to a crashed process.
//
// A lock's age is read on the machine's monotonic clock (the third field of
// its text: CLOCK_MONOTONIC, one clock for every process of a machine), not
// from the file's mtime against the waiter's wall clock: a waiter whose wall
// clock runs ahead (a forward step, a faked clock) would otherwise take over
// a live lock, and one behind would never call a hung holder's lock stale.
// A holder on another machine (a shared filesystem) is judged by mtime.
//
// A lock file appears whole: its text (pid, host, time, a nonce) is written
// to a temp file that is then hard-linked to the lock's name (link fails if
// the name is taken, like O_EXCL). So an empty or unreadable lock file never
// belongs to a live holder (a crash or a full disk left it, or an older
// version between its create and its write) and is stale at once; and each
// live lock's text is unique, which is how a holder and a waiter know it.
//
// Taking over a stale lock is itself a race: a waiter that read the lock of
// a holder that then released it and exited judges that holder gone, while
// the name already holds the next, live lock (inode numbers are reused at
// once, so an inode says nothing). Measured with 32 processes: 1-15 of 32
// writes lost. So a takeover happens only under a second lock (`.takeover`),
// one waiter at a time, and only of the very text judged stale, read again
// under it: a dead holder cannot release, and no other waiter moves it.
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';

export const DEFAULT_STALE_MS = 10_000;
export const DEFAULT_WAIT_MS = 15_000;

export class LockTimeout extends Error {
  /** @param {string} path @param {number} ms */
  constructor(path, ms) {
    super(`could not take ${path} within ${ms} ms`);
    this.name = 'LockTimeout';
  }
}

const HOST = hostname();
/** Milliseconds on the machine's monotonic clock (the same in every process of it). */
const mono = () => Number(process.hrtime.bigint() / 1_000_000n);
/** @param {number} ms */
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Whether a process with this pid runs on this machine.
 * @param {number} pid
 */
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
  const mine = await acquire(path, staleMs, waitMs);
  try {
    return await task();
  } finally {
    await release(path, mine);
  }
}

/**
 * @param {string} path
 * @param {number} staleMs
 * @param {number} waitMs
 * @returns {Promise<string>} the lock's content, which names this holder.
 */
async function acquire(path, staleMs, waitMs) {
  const started = Date.now();
  for (let round = 0; ; round++) {
    // (A taken lock is seen with a stat, before a temp file is made for it.)
    const taken = await stat(path).then(() => true, () => false);
    const mine = taken ? undefined : await create(path);
    if (mine !== undefined) return mine;
    await recoverStale(path, staleMs);
    if (Date.now() - started > waitMs) throw new LockTimeout(path, waitMs);
    await pause(Math.min(50, 2 + round) * (0.5 + Math.random()));
  }
}

/**
 * Creates the lock file with its content in one step; returns that content
 * (which names this holder: a nonce makes it unique), undefined when taken.
 * @param {string} path
 * @returns {Promise<string | undefined>}
 */
async function create(path) {
  const nonce = randomBytes(6).toString('hex');
  const tmp = `${path}.${process.pid}.${nonce}.new`;
  const text = `${process.pid} ${HOST} ${mono()} ${nonce}\n`;
  await writeFile(tmp, text, { mode: 0o600, flag: 'wx' });
  try {
    await link(tmp, path);
    return text;
  } catch (e) {
    if (e.code === 'EEXIST') return undefined;
    throw e;
  } finally {
    await unlink(tmp).catch(() => {});
  }
}

/**
 * The lock's text when it is stale (its holder is gone or too old), else undefined.
 * @param {string} path
 * @param {number} staleMs
 * @returns {Promise<string | undefined>}
 */
async function staleText(path, staleMs) {
  let st, text;
  try {
    st = await stat(path);
  } catch {
    return undefined; // released meanwhile
  }
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if (e.code === 'ENOENT') return undefined;
    text = ''; // unreadable (no permission, a directory): no live holder wrote it
  }
  const [pid, host, held] = text.split(' ');
  const whole = /^\d+ \S+ \d+( [0-9a-f]+)?\n$/.test(text); // (an older version wrote no nonce)
  const here = host === HOST;
  const gone = !whole || (here && Number(pid) > 0 && !alive(Number(pid)));
  // Held since: on this machine, its monotonic time (an older version wrote
  // its wall time there, far ahead of any monotonic reading: judged by mtime).
  const age = here && mono() - Number(held) >= 0 ? mono() - Number(held) : Date.now() - st.mtimeMs;
  return gone || age >= staleMs ? text : undefined;
}

/**
 * @param {string} path
 * @param {number} staleMs
 */
async function recoverStale(path, staleMs) {
  const judged = await staleText(path, staleMs);
  if (judged === undefined) return;
  const guard = `${path}.takeover`;
  const mine = await create(guard);
  if (mine === undefined) {
    // Another waiter is taking over; its guard is stale only if it crashed doing it.
    if ((await staleText(guard, staleMs)) !== undefined) await unlink(guard).catch(() => {});
    return;
  }
  try {
    const now = await readFile(path, 'utf8').catch((e) => (e.code === 'ENOENT' ? undefined : ''));
    if (now !== judged) return; // released or replaced since it was judged
    const away = `${path}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
    await rename(path, away);
    // A holder too old (not gone) may have released it just now and a new
    // one taken the name: what was moved is then not what was judged.
    const moved = await readFile(away, 'utf8').catch(() => '');
    if (moved !== judged) await link(away, path).catch(() => {});
    await rm(away, { recursive: true, force: true });
  } catch {
    // moved by its holder meanwhile: the next round looks again
  } finally {
    await release(guard, mine);
  }
}

/**
 * @param {string} path
 * @param {string} mine - the content this holder wrote.
 */
async function release(path, mine) {
  // Only our own lock: after a long stall it may have been taken over.
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === mine) await unlink(path).catch(() => {});
}
