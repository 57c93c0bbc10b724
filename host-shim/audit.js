// The audit log: one JSON line per decision, under the plugin's state
// directory, rotated to a single `.1` generation at a size cap. It never holds
// prompt text or credentials: only channels, codes, classes and timings.
// Writing it must never disturb a decision, so failures are counted, not thrown.
import { appendFile, mkdir, rename, stat } from 'node:fs/promises';
import { dirname } from 'node:path';

export const DEFAULT_AUDIT_MAX_BYTES = 5 * 1024 * 1024;

export class AuditLog {
  constructor(path, maxBytes = DEFAULT_AUDIT_MAX_BYTES) {
    this.path = path;
    this.maxBytes = maxBytes;
    this.size = undefined; // learnt on first write
    this.failures = 0;
    this.queue = Promise.resolve(); // keeps lines in order
  }

  write(record) {
    const line = JSON.stringify({ at: new Date().toISOString(), ...record }) + '\n';
    this.queue = this.queue.then(() => this.append(line)).catch(() => { this.failures++; });
    return this.queue;
  }

  async append(line) {
    if (this.size === undefined) {
      await mkdir(dirname(this.path), { recursive: true });
      this.size = await stat(this.path).then((s) => s.size, () => 0);
    }
    if (this.size > 0 && this.size + line.length > this.maxBytes) {
      await rename(this.path, this.path + '.1');
      this.size = 0;
    }
    await appendFile(this.path, line);
    this.size += Buffer.byteLength(line);
  }

  /** Resolves when every queued line is written (or has failed). */
  flush() {
    return this.queue;
  }
}
