// The one way the plugin keeps a JSON state file that several host processes
// of one DSH_HOME share (health, quota settings, backup).
//
// Every write is: take the file's lock (lock.js) → read what is on disk →
// merge this process's changes into it → write a temp file and rename it over
// the old one → release. Unlocked, two processes saving at once both read the
// old file and the second rename drops the first one's change (measured with
// 8 processes each setting a different session's quota: 1–3 of 8 kept).
//
// Bounded and self-healing: a file larger than `maxBytes` is not read; a file
// that does not parse is set aside (renamed `<file>.corrupt-<ms>-<hex>`,
// audited with the store's own record type) so the next write starts clean and the bad
// bytes stay for inspection, the newest `keep` of them, each cut to maxBytes.
// Files are the user's only: 0600 in a 0700 directory.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, readdir, rename, stat, truncate, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { withLock } from './lock.js';

/** A state file beyond this is not read (health's 10000 records are ~1.5 MB). */
export const MAX_STATE_BYTES = 4 * 1024 * 1024;
/** Set-aside files kept for inspection; older ones are deleted. */
export const KEEP_SET_ASIDE = 3;

export class TooLarge extends Error {
  /** @param {number} size @param {number} max */
  constructor(size, max) {
    super(`${size} bytes, more than the ${max} read`);
    this.name = 'TooLarge';
  }
}

/**
 * Directories whose state files cannot be written now (a full disk, a
 * read-only or vanished mount), with why: `state-unwritable` is audited once
 * per outage, whichever store meets it first, and `state-writable` when a
 * write lands again. The stores keep what they could not write and write it
 * then (keyed-store.js, health.js's next save).
 */
/** @type {Map<string, string>} directory -> the error code that stopped its writes */
const outages = new Map();

/**
 * What tells one version of a file from the next, without reading it.
 * @param {{ino: number, mtimeMs: number, size: number}} st
 */
export const identity = (st) => `${st.ino}:${st.mtimeMs}:${st.size}`;

export class StateFile {
  /**
   * @param {string} path
   * @param {object} o
   * @param {(record: object) => void} o.audit
   * @param {{type: string}} o.setAside - the record that says a file was set aside (its type is the store's own).
   * @param {number} [o.maxBytes]
   * @param {number} [o.keep]
   * @param {() => number} [o.now]
   * @param {{staleMs?: number, waitMs?: number}} [o.lock]
   */
  constructor(path, { audit, setAside, maxBytes = MAX_STATE_BYTES, keep = KEEP_SET_ASIDE, now = Date.now, lock = {} }) {
    this.path = path;
    this.audit = audit;
    this.setAsideRecord = setAside;
    this.maxBytes = maxBytes;
    this.keep = keep;
    this.now = now;
    this.lockOptions = lock;
    this.lockPath = `${path}.lock`;
  }

  /**
   * Runs task holding the file's lock (its directory made first). A system
   * error on the way (the lock file, the temp file, the rename) is an outage
   * of the directory, audited once; the next locked task that succeeds ends it.
   * @template T
   * @param {() => Promise<T>} task
   * @returns {Promise<T>}
   */
  async locked(task) {
    const dir = dirname(this.path);
    /** @type {T} */
    let out;
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      out = await withLock(this.lockPath, task, this.lockOptions);
    } catch (e) {
      if (typeof e?.code === 'string' && !outages.has(dir)) {
        outages.set(dir, e.code);
        this.audit({ type: 'state-unwritable', dir, file: basename(this.path), code: e.code, reason: String(e.message).slice(0, 200) });
      }
      throw e;
    }
    if (outages.has(dir)) {
      this.audit({ type: 'state-writable', dir, after: outages.get(dir) });
      outages.delete(dir);
    }
    return out;
  }

  /**
   * The file's text, or undefined when there is none; at most maxBytes.
   * @returns {Promise<{text: string, ino: number, id: string} | undefined>}
   * @throws {TooLarge} and any error but ENOENT.
   */
  async read() {
    let fh;
    try {
      fh = await open(this.path, 'r');
    } catch (e) {
      if (e.code === 'ENOENT') return undefined;
      throw e;
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw Object.assign(new Error(`${this.path} is not a regular file`), { code: 'ENOTFILE' });
      if (st.size > this.maxBytes) throw new TooLarge(st.size, this.maxBytes);
      const buf = Buffer.alloc(Math.min(st.size, this.maxBytes) + 1);
      let n = 0;
      for (let got; n < buf.length && (got = (await fh.read(buf, n, buf.length - n, n)).bytesRead) > 0;) n += got;
      if (n > this.maxBytes) throw new TooLarge(n, this.maxBytes); // grew while read
      return { text: buf.subarray(0, n).toString('utf8'), ino: st.ino, id: identity(st) };
    } finally {
      await fh.close();
    }
  }

  /**
   * The parsed document, or undefined when there is none; a file too large
   * or not JSON is set aside. `locked` says whether the caller holds the lock.
   * @returns {Promise<unknown>} the parsed JSON, whatever it holds: the caller checks it.
   */
  async load(locked = false) {
    let read;
    try {
      read = await this.read();
    } catch (e) {
      if (!(e instanceof TooLarge)) throw e;
      await this.setAside(e, locked);
      return undefined;
    }
    if (!read) return undefined;
    try {
      return JSON.parse(read.text);
    } catch (e) {
      await this.setAside(e, locked, read.ino);
      return undefined;
    }
  }

  /**
   * The read-merge-write: under the lock, merge(doc on disk or undefined)
   * returns the document to write (undefined: write nothing).
   * @template {object} D
   * @param {(disk: unknown) => D | undefined | Promise<D | undefined>} merge - given
   *   the parsed JSON on disk, whatever it holds: it checks it.
   * @returns {Promise<D | undefined>} what was written.
   */
  update(merge) {
    return this.locked(async () => {
      const out = await merge(await this.load(true));
      if (out !== undefined) await this.write(out);
      return out;
    });
  }

  /**
   * Temp file beside the target, renamed over it: a reader never sees half. Hold the lock (locked()).
   * @param {unknown} value - written as JSON.
   * @param {number} [space] - JSON.stringify's indent.
   */
  async write(value, space) {
    const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    try {
      await writeFile(tmp, JSON.stringify(value, null, space) + '\n', { mode: 0o600 });
      await rename(tmp, this.path);
    } catch (e) {
      await unlink(tmp).catch(() => {});
      throw e;
    }
  }

  /**
   * Renames a bad file aside and audits it. Never a good file another
   * process just wrote: the move is made under the lock, and only of the
   * version (inode) found bad.
   * @param {unknown} error - why it is bad (a parse error, TooLarge).
   * @param {boolean} locked - whether the caller holds the lock.
   * @param {number} [ino] - the version found bad.
   */
  async setAside(error, locked, ino) {
    const move = async () => {
      const st = await stat(this.path).catch(() => undefined);
      if (!st?.isFile() || (ino !== undefined && st.ino !== ino)) return undefined; // replaced meanwhile
      const aside = `${this.path}.corrupt-${this.now()}-${randomBytes(2).toString('hex')}`;
      await rename(this.path, aside);
      return aside;
    };
    const aside = locked ? await move() : await this.locked(move);
    if (!aside) return;
    this.audit({ ...this.setAsideRecord, file: aside, reason: String(/** @type {{message?: string} | undefined} */ (error)?.message ?? error).slice(0, 300) });
    await this.bound(aside).catch(() => {});
  }

  /**
   * Keeps the newest `keep` set-aside files, each cut to maxBytes.
   * @param {string} aside - the file just set aside.
   */
  async bound(aside) {
    if ((await stat(aside)).size > this.maxBytes) await truncate(aside, this.maxBytes);
    await chmod(aside, 0o600);
    const dir = dirname(this.path);
    const prefix = `${basename(this.path)}.corrupt-`;
    const asides = (await readdir(dir)).filter((f) => f.startsWith(prefix))
      .map((f) => ({ f, at: Number(f.slice(prefix.length).split('-')[0]) || 0 }))
      .sort((a, b) => b.at - a.at || (a.f < b.f ? 1 : -1));
    for (const { f } of asides.slice(this.keep)) await unlink(join(dir, f)).catch(() => {});
  }
}
