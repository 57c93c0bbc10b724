// @ts-check
// The audit log: one JSON line per decision, under the plugin's state
// directory, rotated to a single `.1` generation at a size cap. It never holds
// prompt text or credentials: only channels, codes, classes and timings.
// Writing it must never disturb a decision, so failures are counted, not thrown.
//
// Several host processes of one DSH_HOME append to the same file. Each write
// is one O_APPEND write of whole lines, so lines never interleave. What
// waits is written together, up to BATCH_BYTES a write and never past the cap: a step's records,
// each written alone, cost five file operations a line on the host's main
// thread (about 9 ms of a fresh home's first run, in its CPU profile). Rotation is the race: two
// processes could both decide to rotate, and the second would rename a file
// of a few lines over the full generation the first just kept. A process that
// finds the cap reached takes the rotation lock (lock.js) and rotates only if
// the file itself is still over the cap. The files are the user's only (0600).
//
// A full disk: a line written in part (the disk filled mid-write, measured
// on a 256 KiB filesystem: 144 of 1000 bytes went in) is taken back, so the
// log holds whole lines only and a reader never skips a torn one; if it
// cannot be taken back, the next line starts on a line of its own. Lines that
// could not be written wait (the newest MAX_PENDING) and go first when space
// returns, so what was recorded during the outage (its `state-unwritable`)
// is not lost with it.
//
// Every record's `type` must be defined in audit-types.js. A strict log (the
// tests', or DSH_RESILIENCE_AUDIT_STRICT=1) throws on an unknown type, so a
// new type cannot land undefined; otherwise the record is still written
// (nothing is lost) and the type is remembered in `unknownTypes`.
import { isAuditType } from './audit-types.js';
import { chmod, mkdir, open, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { withLock } from './lock.js';

export const DEFAULT_AUDIT_MAX_BYTES = 5 * 1024 * 1024;
/** Lines kept while the log cannot be written; older ones are counted as lost. */
export const MAX_PENDING = 100;
/** At most this many bytes in one write. */
const BATCH_BYTES = 64 * 1024;

export class AuditLog {
  /**
   * @param {string} path
   * @param {number} [maxBytes] - the size at which the log rotates.
   * @param {{strict?: boolean}} [o] - strict: an undefined record type throws.
   */
  constructor(path, maxBytes = DEFAULT_AUDIT_MAX_BYTES, { strict = process.env.DSH_RESILIENCE_AUDIT_STRICT === '1' } = {}) {
    this.path = path;
    this.maxBytes = maxBytes;
    this.strict = strict;
    /** @type {Set<string>} */
    this.unknownTypes = new Set();
    /** @type {number | undefined} the file's size after this process's last line */
    this.size = undefined;
    this.failures = 0;
    /** @type {Promise<void>} keeps lines in order */
    this.queue = Promise.resolve();
    /** @type {string[]} lines not yet written (the disk was full), oldest first */
    this.pending = [];
    this.lost = 0; // lines dropped from pending while it was full
    this.failing = false; // the last write failed: lines wait, the newest MAX_PENDING
    this.torn = false; // a part line could not be taken back: start the next on its own
  }

  /**
   * Queues one record as a line; resolves once it is written (or has failed).
   * @param {object} record - with a `type` defined in audit-types.js.
   * @returns {Promise<void>}
   */
  write(record) {
    const type = /** @type {{type?: unknown} | undefined} */ (record)?.type;
    if (!isAuditType(type)) {
      if (this.strict) throw new TypeError(`dsh-resilience: audit record type ${JSON.stringify(type)} is not defined in audit-types.js`);
      this.unknownTypes.add(String(type));
    }
    this.pending.push(JSON.stringify({ at: new Date().toISOString(), ...record }) + '\n');
    if (this.failing) this.keepNewest();
    this.queue = this.queue.then(() => this.drain());
    return this.queue;
  }

  /** Writes what waits, in order, a batch a write; a failure leaves it waiting. */
  async drain() {
    try {
      if (this.lost > 0) {
        await this.append(JSON.stringify({ at: new Date().toISOString(), type: 'audit-lost', lines: this.lost }) + '\n');
        this.lost = 0;
      }
      while (this.pending.length > 0) {
        // As many as fit before the cap (at least one: append rotates for
        // it), and at most 1/32 of it: processes sharing the log each know
        // its size only as of their last write, so a write overshoots by little.
        const room = Math.min(BATCH_BYTES, this.maxBytes / 32, this.maxBytes - (this.size ?? 0));
        let n = 0;
        let bytes = 0;
        while (n < this.pending.length) {
          const b = Buffer.byteLength(this.pending[n]);
          if (n > 0 && bytes + b > room) break;
          bytes += b;
          n++;
        }
        await this.append(this.pending.slice(0, n).join(''));
        this.pending.splice(0, n);
      }
      this.failing = false;
    } catch {
      this.failures++;
      this.failing = true;
      this.keepNewest();
    }
  }

  /** While the log cannot be written, only the newest MAX_PENDING lines wait. */
  keepNewest() {
    if (this.pending.length > MAX_PENDING) this.lost += this.pending.splice(0, this.pending.length - MAX_PENDING).length;
  }

  /** @param {string} line - whole lines */
  async append(line) {
    if (this.size === undefined) {
      await mkdir(dirname(this.path), { recursive: true, mode: 0o700 });
      this.size = await stat(this.path).then((s) => s.size, () => 0);
      if (this.size > 0) await chmod(this.path, 0o600).catch(() => {}); // written 0644 by older versions
    }
    const bytes = Buffer.byteLength(line);
    if (this.size > 0 && this.size + bytes > this.maxBytes) await this.rotate(bytes);
    const fh = await open(this.path, 'a', 0o600);
    try {
      const before = (await fh.stat()).size;
      const buf = Buffer.from(this.torn && before > 0 ? `\n${line}` : line);
      const { bytesWritten } = await fh.write(buf);
      if (bytesWritten < buf.length) {
        // Only our own part line is cut: not if another process wrote meanwhile.
        const after = (await fh.stat()).size;
        const cut = after === before + bytesWritten && (await fh.truncate(before).then(() => true, () => false));
        if (!cut && bytesWritten > 0) this.torn = true;
        throw Object.assign(new Error(`${this.path}: ${bytesWritten} of ${buf.length} bytes written`), { code: 'ENOSPC' });
      }
      this.torn = false;
      this.size = (await fh.stat()).size; // other processes' lines included
    } finally {
      await fh.close();
    }
  }

  /**
   * Rotates if the file itself (other processes' lines included) is full.
   * @param {number} bytes - the line about to be written.
   */
  async rotate(bytes) {
    await withLock(`${this.path}.lock`, async () => {
      const size = await stat(this.path).then((s) => s.size, () => 0);
      if (size > 0 && size + bytes > this.maxBytes) {
        await rename(this.path, this.path + '.1');
        this.size = 0;
      } else {
        this.size = size; // another process rotated already
      }
    });
  }

  /** Resolves when every queued line is written (or has failed). */
  flush() {
    return this.queue;
  }
}
