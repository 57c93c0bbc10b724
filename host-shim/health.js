// @ts-check
// Channel health on disk, shared by every host process of one DSH_HOME.
//
// The file is the module's `health` snapshot. Every write is a read-merge-write
// under an inter-process lock (lock.js): what another process wrote is merged
// into the module first (the newer record per channel wins), then the result
// is written to a temp file and renamed over the old one. Without the lock two
// processes saving at once both read the old file and the second rename drops
// the first one's trip. Each process re-reads the file when it changes
// (polled every refreshMs): a trip in one host is seen by the others within
// one refresh.
//
// Bounded on every side: a file larger than `maxBytes` is set aside unread;
// what the file keeps is the module's word (WIT `persist`: closed records
// past the row's healthPruneMs are dropped there, and a restore does not take
// them); set-aside files are kept for inspection, the newest few, each cut
// to `maxBytes`.
// Files are the user's only (0600, directory 0700): they name providers and
// usage. A file that does not parse, that the module refuses, or that traps
// it is set aside (audited) and rebuilt; a bad record in a good file is
// skipped and audited, and the rest is kept. A store that cannot read or
// write at all (health.json a directory, no permission, a lock never freed)
// says so once per outage, and bad state never stops the plugin.
import { stat } from 'node:fs/promises';
import { ModuleError, TrapError } from './kernel.js';
import { identity, KEEP_SET_ASIDE, MAX_STATE_BYTES, StateFile, TooLarge } from './store.js';
import { now as clockNow } from './clock.js';

export const DEFAULT_REFRESH_MS = 5_000;
/** 10000 records (the module's own bound) are ~1.5 MB; a file beyond this is not read. */
export const MAX_HEALTH_BYTES = MAX_STATE_BYTES;


export class HealthStore {
  /**
   * @param {string} path - the health file.
   * @param {import('./engine.js').Engine} policy
   * @param {(record: object) => void} audit
   * @param {{maxBytes?: number, keep?: number, now?: () => number,
   *   saved?: (coldPass: boolean) => Promise<void>}} [o] - saved: told the module's
   *   `coldPass` after each write, still under the lock (cold-start.js).
   */
  constructor(path, policy, audit, { maxBytes = MAX_HEALTH_BYTES, keep = KEEP_SET_ASIDE, now = clockNow, saved } = {}) {
    this.path = path;
    this.saved = saved;
    this.file = new StateFile(path, { audit, setAside: { type: 'health-set-aside' }, maxBytes, keep, now });
    this.policy = policy;
    this.audit = audit;
    this.now = now;
    /** @type {string | undefined} identity (inode, mtime, size) of the version last merged or written */
    this.seen = undefined;
    /** @type {Promise<void>} one read or write at a time */
    this.queue = Promise.resolve();
    this.failures = 0;
    /** @type {string | undefined} why the store cannot work, while it cannot (audited once) */
    this.trouble = undefined;
    this.closed = false;
    /** @type {Promise<void> | undefined} the refresh under way, which a later one joins */
    this.refreshing = undefined;
  }

  /**
   * Merges the file into the module if it changed since it was last seen. A
   * refresh asked for while one is under way joins it: a slow disk must not
   * pile up reads behind each other (nor keep a disposing plugin waiting); the
   * next period's refresh sees what it missed.
   */
  refresh() {
    if (this.refreshing) return this.refreshing;
    const run = this.serial('read', async () => {
      const st = await stat(this.path).catch((e) => {
        if (e.code === 'ENOENT') return undefined;
        throw e;
      });
      if (!st || identity(st) === this.seen) return;
      const read = await this.mergeFile(false);
      this.seen = read?.id ?? identity(st);
    });
    if (this.closed) return run;
    this.refreshing = run.finally(() => { this.refreshing = undefined; });
    return this.refreshing;
  }

  /**
   * The file's health document as JSON text, for the engine's first
   * bring-up; undefined when there is none or it cannot be read. Nothing is
   * set aside here: the refresh after activation does that, naming why.
   * @returns {Promise<string | undefined>}
   */
  async peek() {
    try {
      const text = (await this.file.read())?.text;
      if (text !== undefined) JSON.parse(text); // one that does not parse starts the engine without it
      return text;
    } catch {
      return undefined;
    }
  }

  /** Writes the module's health, merging what others wrote first. */
  save() {
    // The merge is the module's own (restore: the newer record per channel
    // wins), so the store's lock, read and write are used around it.
    return this.serial('write', () => this.file.locked(async () => {
      await this.mergeFile(true);
      const persisted = this.policy.persist(this.now());
      if (!persisted) return;
      await this.file.write(persisted.health, 1);
      this.seen = identity(await stat(this.path));
      // A word not written costs the next process only its cold start.
      await this.saved?.(persisted.coldPass).catch(() => {});
    }));
  }

  /**
   * A first run's word, at its end, when its module checked the row but
   * never came up (a run shorter than its cold start's kick): written as any
   * word, under the lock, and only while the home still has no health
   * records, which is what the word speaks of (cold-start.js firstRunWord).
   */
  firstWord() {
    return this.serial('write', () => this.file.locked(async () => {
      if (await stat(this.path).then(() => true, () => false)) return;
      await this.saved?.(true).catch(() => {});
    }));
  }

  /**
   * Ends the store: the reads and writes already asked for finish, later ones
   * do nothing. Nothing is written after the plugin's `stop` record.
   */
  async close() {
    this.closed = true;
    await this.queue;
  }

  /**
   * Reads the file (at most maxBytes) and merges it into the module. A file
   * that cannot be taken is set aside; `locked` says whether we hold the lock
   * (a set-aside must, so it never renames a good file another process just
   * wrote). Returns the version read.
   * @param {boolean} locked
   * @returns {Promise<{text: string, ino: number, id: string} | undefined>}
   */
  async mergeFile(locked) {
    let read;
    try {
      read = await this.file.read();
    } catch (e) {
      if (e instanceof TooLarge) await this.file.setAside(e, locked);
      else throw e;
      return undefined;
    }
    if (!read) return undefined;
    let result;
    try {
      result = this.policy.restore(read.text, undefined, { live: true }); // news from running processes (boot reads the file in peek)
    } catch (e) {
      // Not JSON (or nested past the JS stack), refused, or a trap the file
      // caused (the module is rebuilt): the file is to blame.
      if (e instanceof SyntaxError || e instanceof RangeError || e instanceof ModuleError || e instanceof TrapError) {
        await this.file.setAside(e, locked, read.ino);
      }
      return read;
    }
    if (/** @type {number} */ (result.skipped) > 0) { // absent: none skipped (undefined > 0 is false)
      this.audit({ type: 'health-skipped', skipped: result.skipped, of: result.channels, reasons: (result.skipReasons ?? []).map((r) => r.slice(0, 200)) });
    }
    if (result.adopted > 0) this.audit({ type: 'health-merged', adopted: result.adopted, of: result.channels });
    return read;
  }

  /**
   * Runs one read or write after the last; a closed store runs nothing.
   * @param {'read' | 'write'} op
   * @param {() => Promise<void>} task
   * @returns {Promise<void>}
   */
  serial(op, task) {
    if (this.closed) return this.queue;
    const run = this.queue.then(async () => {
      try {
        await task();
        if (this.trouble && op === 'write') {
          this.audit({ type: 'health-available', after: this.trouble });
          this.trouble = undefined;
        }
      } catch (e) {
        this.failures++;
        if (!this.trouble) {
          this.trouble = `${op}: ${e.code ?? e.name}`;
          this.audit({ type: 'health-unavailable', op, file: this.path, reason: String(e?.message ?? e).slice(0, 300) });
        }
      }
    });
    this.queue = run;
    return run;
  }
}

