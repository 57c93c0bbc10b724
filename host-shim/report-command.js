// @ts-check
// `/resilience report [24h|7d]`, and the web's `report` endpoint: the report
// (report.js) over the last day or week of this host's audit log, both
// generations. The command prints the text; the web gets the same numbers,
// the same text and the timeline picture, to show them its own way.
import { readFile } from 'node:fs/promises';
import { computeReport, parseAuditText, renderReportText } from './report.js';
import { timelineSvg } from './report-html.js';

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
 * @param {{locale?: string}} [opts] - the picture's language (the web viewer's).
 * @returns {Promise<{error?: string, report?: object, text?: string, svg?: string}>}
 */
export async function reportData(auditPath, word, nowMs, { locale } = {}) {
  const spanMs = parseWindow(word ?? '24h');
  if (spanMs === undefined) return { error: `"${word}" is not a window: ${USAGE}` };
  let body = '';
  for (const p of [`${auditPath}.1`, auditPath]) body += await readFile(p, 'utf8').catch(() => '') + '\n';
  const { records, bad } = parseAuditText(body);
  const report = computeReport([records], { fromMs: nowMs - spanMs, toMs: nowMs });
  const note = bad > 0 ? `\n\n(${bad} unreadable audit lines skipped)` : '';
  return { report, text: renderReportText(report) + note, svg: timelineSvg(report, { locale }) };
}

/**
 * The command's answer.
 * @returns {Promise<import('@deepseek-ai/dsh-commands').CommandResult>}
 */
export async function reportCommand(auditPath, word, nowMs) {
  const out = await reportData(auditPath, word, nowMs);
  return out.error ? { kind: 'error', text: out.error } : { kind: 'success', text: out.text };
}
