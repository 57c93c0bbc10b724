// @ts-check
// Text for people, one way each: times, durations and plain-text tables
// (the commands, the report, the migration table). Nothing here may throw
// on a number the module answers: a throw would cost the answer.

/**
 * An ISO time for any number, or undefined when it is not a time.
 * @param {number} ms
 */
export function isoTime(ms) {
  const d = new Date(ms);
  return Number.isFinite(d.getTime()) ? d.toISOString() : undefined;
}

/**
 * A UTC time to the second, "2030-01-01 12:00:00"; the number itself when it is not a time.
 * @param {number} ms
 */
export const utcTime = (ms) => (isoTime(ms) ?? String(ms)).replace('T', ' ').slice(0, 19);

/**
 * A time in a table: "-" for none (0 or absent).
 * @param {number | undefined} ms
 */
export const timeOrDash = (ms) => (ms ? utcTime(ms) : '-');

/**
 * A duration for people: "400 ms", "1.4 s", "12 s", "4 min 12 s", "2 h 5 min".
 * @param {number} ms
 */
export function formatDuration(ms) {
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${Math.round(s - m * 60)} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

/**
 * A duration rounded to one unit, for a table cell: "45 s", "12 min", "3.5 h".
 * @param {number} ms
 */
export function roughDuration(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

/**
 * Rows of cells as aligned lines, two spaces apart, trailing space trimmed.
 * @param {string[][]} rows - the header first.
 * @param {{rule?: boolean, padded?: number}} [opts] - `rule`: a dashed line
 *   under the header; `padded`: how many leading columns are aligned (all by
 *   default; a free-text last column stays as it is).
 * @returns {string[]}
 */
export function tableLines(rows, { rule = false, padded = rows[0].length } = {}) {
  const widths = rows[0].slice(0, padded).map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => (i < padded ? c.padEnd(widths[i]) : c)).join('  ').trimEnd());
  if (rule) lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return lines;
}
