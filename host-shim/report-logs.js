// @ts-check
// The report's reading half: audit logs read as streams, their lines handed
// to the module's report exports in batches (policy/report computes every
// number; report.js and report-html.js lay them out). Nothing here holds a
// log, or a line, whole: a 600 MB log once died here as one string ("Cannot
// create a string longer than 0x1fffffe8"), and a line past the module's
// bound is cut to a byte over it, which the module then skips and counts.
//
// A report runs on an instance of its own, not the engine's: its batches and
// aggregates never grow the policy's memory (which never shrinks), a report
// cannot disturb a decision, and everything it used is freed with the
// instance when it ends (after ~20 reports on the policy's instance the host
// had grown from 174 to 458 MB). An instance comes up in a few ms from the
// module the process compiled once.
import { open } from 'node:fs/promises';
import { ModuleInstance } from './kernel.js';

/** @import { Report, ReportLimits, ReportProgress, ReportWindow } from './policy-types.js' */

/** A batch: this many lines, or this many characters, whichever comes first. */
export const BATCH_LINES = 2000;
export const BATCH_CHARS = 1 << 20;
const CHUNK_BYTES = 64 * 1024;
const NL = 0x0a;

/**
 * One log's lines, its files one after another (a file's end ends its last
 * line), read in chunks. A file that cannot be opened is not there.
 * @param {string[]} files
 * @param {number} maxLineBytes - a longer line is cut to one byte over it.
 * @returns {AsyncGenerator<string, void, undefined>}
 */
export async function* auditLines(files, maxLineBytes) {
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  for (const path of files) {
    const fh = await open(path, 'r').catch(() => undefined);
    if (!fh) continue;
    try {
      /** @type {Buffer[]} */
      let parts = [];
      let kept = 0; // bytes of the current line held, at most maxLineBytes + 1
      for (;;) {
        const { bytesRead } = await fh.read(chunk, 0, CHUNK_BYTES, null);
        if (bytesRead === 0) break;
        let start = 0;
        while (start < bytesRead) {
          const nl = chunk.indexOf(NL, start);
          const end = nl < 0 || nl >= bytesRead ? bytesRead : nl;
          const room = maxLineBytes + 1 - kept;
          if (room > 0 && end > start) {
            const take = Math.min(room, end - start);
            parts.push(Buffer.from(chunk.subarray(start, start + take)));
            kept += take;
          }
          if (end === bytesRead) break;
          yield Buffer.concat(parts, kept).toString('utf8');
          parts = [];
          kept = 0;
          start = end + 1;
        }
      }
      if (kept > 0) yield Buffer.concat(parts, kept).toString('utf8');
    } finally {
      await fh.close();
    }
  }
}

/**
 * One log's lines in batches.
 * @param {AsyncIterable<string> | Iterable<string>} lines
 * @returns {AsyncGenerator<string[], void, undefined>}
 */
async function* batches(lines) {
  /** @type {string[]} */
  let batch = [];
  let chars = 0;
  for await (const line of lines) {
    batch.push(line);
    chars += line.length;
    if (batch.length >= BATCH_LINES || chars >= BATCH_CHARS) {
      yield batch;
      batch = [];
      chars = 0;
    }
  }
  if (batch.length > 0) yield batch;
}

/**
 * The report over several hosts' logs, merged by time, each log its files in
 * order (a rotated `.1` generation first).
 * @param {WebAssembly.Module} compiled - the module, compiled once per process.
 * @param {string[][]} logs
 * @param {{fromMs?: number, toMs?: number}} [window] - default: first to last record.
 * @returns {Promise<Report>}
 */
export function reportOfLogs(compiled, logs, window = {}) {
  return reportOfLines(compiled, logs.map((files) => (maxLineBytes) => auditLines(files, maxLineBytes)), window);
}

/**
 * The report over several hosts' lines, merged by time.
 * @param {WebAssembly.Module} compiled
 * @param {((maxLineBytes: number) => AsyncIterable<string> | Iterable<string>)[]} logs - each
 *   host's lines, given the module's bound on a line.
 * @param {{fromMs?: number, toMs?: number}} [window]
 * @returns {Promise<Report>}
 */
export async function reportOfLines(compiled, logs, window = {}) {
  const module = new ModuleInstance(compiled);
  /**
   * @param {string} name
   * @param {object} [input]
   */
  const call = (name, input) => JSON.parse(module.call(name, input === undefined ? '' : JSON.stringify(input)));
  /** @type {ReportWindow} */
  const begin = { fromMs: window.fromMs, toMs: window.toMs, logs: logs.length };
  /** @type {ReportLimits} */
  const { maxLineBytes } = call('report-begin', begin);
  const readers = logs.map((lines) => batches(lines(maxLineBytes)));
  try {
    /** @type {number | undefined} */
    let need = 0;
    while (need !== undefined) {
      const next = await readers[need].next();
      /** @type {ReportProgress} */
      // `lines` last: the module reads `log` and `end` without skipping over a megabyte of lines.
      const progress = call('report-feed', { log: need, end: next.done === true, lines: next.done ? [] : next.value });
      need = progress.need ?? undefined;
    }
    return call('report-end');
  } finally {
    await Promise.all(readers.map((r) => r.return(undefined))); // close what an error left open
  }
}
