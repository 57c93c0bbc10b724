// @ts-check
// `/resilience report [24h|7d]`, and the web's `report` endpoint: the report
// (computed by the module through report-logs.js, worded by report.js) over
// the last day or week of this host's audit log, both generations. The
// command prints the text; the web gets the same numbers, the same text and
// the timeline picture, to show them its own way.
import { compileModule } from './engine.js';
import { renderReportText } from './report.js';
import { timelineSvg } from './report-html.js';
import { reportOfLogs } from './report-logs.js';

/** @import { Report } from './policy-types.js' */

/** @type {Record<string, number>} */
const UNITS = { h: 3600_000, d: 86_400_000 };
const USAGE = 'use /resilience report [24h|7d] (or <n>h, <n>d)';

/** The window's length from the command's word: `24h`, `7d`, any `<n>h` or `<n>d`; undefined if not one. */
export function parseWindow(word = '24h') {
  const m = /^(\d{1,4})([hd])$/.exec(String(word));
  if (!m || Number(m[1]) === 0) return undefined;
  return Number(m[1]) * UNITS[m[2]];
}

/**
 * The report over the window ending now.
 * @param {string} auditPath - the live audit file; its `.1` generation is read first.
 * @param {string|undefined} word - the window, `24h` when absent.
 * @param {number} nowMs - the window's end.
 * @param {{locale?: string, compiled?: Promise<WebAssembly.Module>}} [opts] - the picture's
 *   language (the web viewer's); the module (default: the one the process compiled, engine.js).
 * @returns {Promise<{error?: string, report?: Report, text?: string, svg?: string}>}
 */
export async function reportData(auditPath, word, nowMs, { locale, compiled = compileModule() } = {}) {
  const spanMs = parseWindow(word ?? '24h');
  if (spanMs === undefined) return { error: `"${word}" is not a window: ${USAGE}` };
  const report = await reportOfLogs(await compiled, [[`${auditPath}.1`, auditPath]], { fromMs: nowMs - spanMs, toMs: nowMs });
  return { report, text: renderReportText(report), svg: timelineSvg(report, { locale }) };
}

/**
 * The command's answer.
 * @param {string} auditPath
 * @param {string | undefined} word
 * @param {number} nowMs
 * @returns {Promise<import('@deepseek-ai/dsh-commands').CommandResult>}
 */
export async function reportCommand(auditPath, word, nowMs) {
  const out = await reportData(auditPath, word, nowMs);
  return out.error ? { kind: 'error', text: out.error } : { kind: 'success', text: out.text };
}
