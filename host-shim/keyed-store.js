// A state file of independent records, one per key (a session's quota
// settings, a provider's exhaustion mark), shared by every host process of
// one DSH_HOME and lossless under concurrency.
//
// A process never writes back what it merely read: it keeps, per key, the
// changes it made (functions of the record), and applies them under the
// file's lock to the record on disk at that moment (store.js). So writers of
// different keys never drop each other's records, and two writers of one
// key both land, in lock order: the later change applies to the record the
// earlier one wrote.
//
// Each record carries `v`, bumped by every write under the lock. Which copy
// of a record is newer is decided by `v`, never by a wall clock: a host
// whose clock runs ahead must not overrule the others' settings.
import { StateFile } from './store.js';

/**
 * One change of a record: the current record (undefined: none) in, the new one
 * out (undefined: drop it).
 * @template R
 * @typedef {(record: R | undefined) => R | undefined} Change
 */

/**
 * A record's version in the file (0 when it has none).
 * @param {{v?: unknown} | undefined} r
 * @returns {number}
 */
const version = (r) => (Number.isSafeInteger(r?.v) && /** @type {{v: number}} */ (r).v > 0 ? /** @type {{v: number}} */ (r).v : 0);
/**
 * @param {unknown} r
 * @returns {r is Record<string, unknown>}
 */
const isRecord = (r) => r !== null && typeof r === 'object' && !Array.isArray(r);

/**
 * @template {{v?: number}} R - one record, as the store's owner writes it
 *   (`v`, its version in the file, is the store's).
 */
export class KeyedStore {
  /**
   * @param {string} path
   * @param {object} o
   * @param {{setAside: {type: string}, notRead: {type: string}, notSaved: {type: string}, saved: {type: string}}} o.records -
   *   the store's own audit records (types defined in audit-types.js).
   * @param {string} o.field - the document's map of records (`{[field]: {key: record}}`).
   * @param {(record: object) => void} o.audit
   * @param {(record: object) => boolean} [o.valid] - a record on disk worth keeping.
   * @param {(records: Map<string, R>) => void} [o.prune] - drops records before a write.
   * @param {object} [o.file] - StateFile options (lock, maxBytes, now).
   */
  constructor(path, { records, field, audit, valid = () => true, prune = () => {}, file = {} }) {
    this.file = new StateFile(path, { audit, setAside: records.setAside, ...file });
    this.types = records;
    this.field = field;
    this.audit = audit;
    this.valid = valid;
    this.prune = prune;
    /** @type {Map<string, R>} key -> record, as this process last knew it */
    this.records = new Map();
    /** @type {Map<string, Change<R>[]>} key -> its changes not yet written, in order */
    this.dirty = new Map();
    /** @type {Promise<void>} */
    this.queue = Promise.resolve();
    /** @type {Promise<void> | undefined} a save queued but not started: later changes join it */
    this.pending = undefined;
    /** @type {string | undefined} why saving fails, while it does (audited once) */
    this.trouble = undefined;
  }

  /** @param {string} key */
  get(key) {
    return this.records.get(key);
  }

  /** Reads the file and takes every record newer than the one held. */
  async load() {
    const doc = await this.file.load().catch((e) => {
      this.audit({ ...this.types.notRead, reason: String(e?.message ?? e).slice(0, 200) });
      return undefined;
    });
    this.adopt(this.recordsOf(doc));
  }

  /**
   * The records a document on disk holds that are worth keeping.
   * @param {unknown} doc - the file's parsed JSON, whatever it holds (checked here).
   * @returns {Map<string, R>}
   */
  recordsOf(doc) {
    /** @type {Map<string, R>} */
    const out = new Map();
    const map = /** @type {Record<string, unknown> | null | undefined} */ (doc)?.[this.field];
    if (!isRecord(map)) return out;
    for (const [key, r] of Object.entries(map)) if (isRecord(r) && this.valid(r)) out.set(key, /** @type {R} */ (r)); // `valid` is the owner's check
    return out;
  }

  /** @param {Map<string, R>} disk */
  adopt(disk) {
    for (const [key, r] of disk) {
      if (this.dirty.has(key)) continue; // ours is applied on the next write
      const mine = this.records.get(key);
      if (!mine || version(r) > version(mine)) this.records.set(key, r);
    }
  }

  /**
   * Changes one record (change gets the current record or undefined and
   * returns the new one, or undefined to drop it) here at once and in the
   * file on the next save.
   * @param {string} key
   * @param {Change<R>} change
   * @returns {Promise<void>} settles when the change is on disk (or failed, audited).
   */
  change(key, change) {
    const now = change(this.records.get(key));
    if (now === undefined) this.records.delete(key);
    else this.records.set(key, now);
    this.dirty.set(key, [...(this.dirty.get(key) ?? []), change]);
    return this.save();
  }

  save() {
    if (this.pending) return this.pending;
    const run = this.queue.then(async () => {
      this.pending = undefined;
      /** @type {Map<string, Change<R>[]> | undefined} */
      let taken;
      try {
        await this.file.update((doc) => {
          const disk = this.recordsOf(doc);
          taken = this.dirty;
          this.dirty = new Map();
          for (const [key, changes] of taken) {
            const before = disk.get(key);
            let r = before;
            for (const c of changes) r = c(r);
            if (r === undefined) disk.delete(key);
            else disk.set(key, { ...r, v: version(before) + 1 });
          }
          this.prune(disk);
          this.records = new Map(disk); // the file is the truth now; later changes apply to it
          return { [this.field]: Object.fromEntries(disk) };
        });
        if (this.trouble) this.audit({ ...this.types.saved, after: this.trouble });
        this.trouble = undefined;
      } catch (e) {
        // Not written: the changes wait for the next save (before any made since).
        if (taken) for (const [key, changes] of taken) this.dirty.set(key, [...changes, ...(this.dirty.get(key) ?? [])]);
        if (!this.trouble) {
          this.trouble = String(e?.code ?? e?.name ?? 'error');
          this.audit({ ...this.types.notSaved, reason: String(e?.message ?? e).slice(0, 200) });
        }
      }
    });
    this.pending = run;
    this.queue = run;
    return run;
  }
}
