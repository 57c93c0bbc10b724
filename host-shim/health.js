// Channel health on disk, shared by every host process of one DSH_HOME.
//
// The file is the module's `health` snapshot. Writes are atomic (a temp file
// renamed over it) and read-merge-write: before writing, what another process
// wrote is merged into the module (the newer record per channel wins), so no
// process erases another's trip. Each process re-reads the file when it
// changes (polled every refreshMs), which is how a trip in one host is seen
// by the others within one refresh. A file that does not parse, or that the
// module rejects, is set aside (renamed, audited once) and rebuilt: bad state
// never stops the plugin.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ModuleError } from './kernel.js';

export const DEFAULT_REFRESH_MS = 5_000;

export class HealthStore {
  /**
   * @param {string} path - the health file.
   * @param {import('./policy.js').Policy} policy
   * @param {(record: object) => void} audit
   */
  constructor(path, policy, audit) {
    this.path = path;
    this.policy = policy;
    this.audit = audit;
    this.seen = undefined; // mtimeMs of the version last merged or written
    this.queue = Promise.resolve(); // one read or write at a time
    this.failures = 0;
  }

  /** Merges the file into the module if it changed since it was last seen. */
  refresh() {
    return this.serial(async () => {
      const st = await stat(this.path).catch(() => undefined);
      if (!st || st.mtimeMs === this.seen) return;
      await this.mergeFile();
      this.seen = st.mtimeMs;
    });
  }

  /** Writes the module's health, merging what others wrote first. */
  save() {
    return this.serial(async () => {
      await this.mergeFile();
      const snapshot = this.policy.snapshot();
      if (!snapshot) return;
      await mkdir(dirname(this.path), { recursive: true });
      const tmp = `${this.path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
      await writeFile(tmp, JSON.stringify(snapshot, null, 1) + '\n');
      await rename(tmp, this.path);
      this.seen = (await stat(this.path)).mtimeMs;
    });
  }

  async mergeFile() {
    let text;
    try {
      text = await readFile(this.path, 'utf8');
    } catch (e) {
      if (e.code === 'ENOENT') return;
      throw e;
    }
    let result;
    try {
      JSON.parse(text);
      result = this.policy.restore(text);
    } catch (e) {
      if (e instanceof SyntaxError || e instanceof ModuleError) await this.setAside(e);
      return; // anything else is the module's trouble, already logged: keep the file
    }
    if (result.adopted > 0) this.audit({ type: 'health-merged', adopted: result.adopted, of: result.channels });
  }

  async setAside(error) {
    const aside = `${this.path}.corrupt-${Date.now()}`;
    await rename(this.path, aside).catch(() => {});
    this.audit({ type: 'health-set-aside', file: aside, reason: String(error?.message ?? error).slice(0, 300) });
  }

  serial(task) {
    const run = this.queue.then(task);
    this.queue = run.catch(() => { this.failures++; });
    return this.queue;
  }
}
