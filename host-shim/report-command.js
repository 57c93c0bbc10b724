// `/resilience report [24h|7d]`: the report (report.js) over the last day or
// week of this host's audit log, both generations, as text.
import { readFile } from 'node:fs/promises';
import { computeReport, parseAuditText, renderReportText } from './report.js';

const UNITS = { h: 3600_000, d: 86_400_000 };

/** The window's length from the command's word: `24h`, `7d`, any `<n>h` or `<n>d`; undefined if not one. */
export function parseWindow(word = '24h') {
  const m = /^(\d{1,4})([hd])$/.exec(String(word));
  if (!m || Number(m[1]) === 0) return undefined;
  return Number(m[1]) * UNITS[m[2]];
}

/**
 * @param {string} auditPath - the live audit file; its `.1` generation is read first.
 * @param {string|undefined} word - the window, `24h` when absent.
 * @param {number} nowMs - the window's end.
 */
export async function reportCommand(auditPath, word, nowMs) {
  const spanMs = parseWindow(word ?? '24h');
  if (spanMs === undefined) return { kind: 'error', text: `"${word}" is not a window: use /resilience report [24h|7d] (or <n>h, <n>d)` };
  let text = '';
  for (const p of [`${auditPath}.1`, auditPath]) text += await readFile(p, 'utf8').catch(() => '') + '\n';
  const { records, bad } = parseAuditText(text);
  const report = computeReport([records], { fromMs: nowMs - spanMs, toMs: nowMs });
  const note = bad > 0 ? `\n\n(${bad} unreadable audit lines skipped)` : '';
  return { kind: 'success', text: renderReportText(report) + note };
}
