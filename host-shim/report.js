// @ts-check
// The report's words: what happened over a window of audit records, and what
// it saved. The module computes every number (policy/report, through
// report-logs.js); the text here (`renderReportText`, for `/resilience
// report`) and the HTML page (report-html.js, for `make report`) only lay
// those numbers out, in the same words, so they can never disagree.
import { formatDuration, tableLines, utcTime as formatTime } from './text.js';

/** @import { Report, ReportGiveUp, ReportIncident, ReportStock } from './policy-types.js' */

/**
 * A give-up's tried list, the same words in text and HTML.
 * @param {ReportGiveUp} g
 */
export const triedText = (g) => g.tried.map((x) => `${x.channel} (${x.code}${x.count > 1 ? ` ×${x.count}` : ''})`).join(', ');

/** A duration for people, and a UTC time to the second (text.js): the report's words. */
export { formatDuration, formatTime };
/**
 * A share, floored: a channel down for seconds of a day must not read 100%.
 * @param {number} x
 */
export function formatPercent(x) {
  if (x >= 1) return '100%';
  const places = x >= 0.99 ? 3 : 2;
  return `${(Math.floor(x * 100 * 10 ** places + 1e-6) / 10 ** places).toFixed(places)}%`;
}
const pct = formatPercent;

/**
 * The lines the report could not use, the same words in text and HTML.
 * @param {Report} report
 */
export const skippedText = (report) => `${count(report.skipped, 'record')} skipped: unreadable or malformed`;

/**
 * The stock host's line for an incident, the same words in text and HTML.
 * @param {ReportStock} st
 */
export function stockLine(st) {
  const undecided = st.turnsUndecided > 0 ? ` so far (${st.turnsUndecided} more if it lasts ~${formatDuration(st.budgetMs)} past their first failure)` : '';
  const verdict = st.turnsHit > 0 ? `: ${st.turnsFailed} of ${st.turnsHit} turns would have failed${undecided}` : '';
  if (st.retries === 0) return `stock host: the turn fails at once (${st.why})${verdict}`;
  const hung = st.why ? `, ${st.why}` : '';
  return `stock host: ${st.retries} retries over ~${formatDuration(st.budgetMs)}${hung}, then the turn fails with ${st.code}${verdict}`;
}

/**
 * The incident's one-line numbers, the same words in text and HTML.
 * @param {ReportIncident} inc
 */
export function incidentNumbers(inc) {
  const probes = inc.failedProbes ? ` · failed probes ${inc.failedProbes}` : '';
  return `sessions ${inc.sessions} · failovers ${inc.failovers} · failed requests ${inc.failedRequests}${probes} · time lost ${formatDuration(inc.lostMs)}`;
}

/**
 * The channel table's rows, header first.
 * @param {Report} report
 */
export function channelRows(report) {
  const rows = [['channel', 'availability', 'requests', 'failed', 'failovers', 'ttft p50', 'ttft p95']];
  for (const c of report.channels) {
    if (c.providerWide) continue; // a lane in the timeline; its time counts in its models' availability
    rows.push([c.channel, pct(c.availability), String(c.requests), String(c.failures), String(c.failovers.length),
      c.ttftCount ? formatDuration(c.ttftP50Ms ?? NaN) : '-', c.ttftCount ? formatDuration(c.ttftP95Ms ?? NaN) : '-']);
  }
  return rows;
}

/**
 * @param {number} n
 * @param {string} word
 */
const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * The text form of a report (`/resilience report`).
 * @param {Report} report
 */
export function renderReportText(report) {
  const out = [];
  const hosts = report.logs === 1 ? '1 log' : `${report.logs} logs`;
  out.push(`dsh-resilience report, ${formatTime(report.fromMs)} → ${formatTime(report.toMs)} UTC (${formatDuration(report.toMs - report.fromMs)}, ${hosts})`);
  const t = report.totals;
  out.push(`${count(t.incidents, 'incident')}, ${count(t.sessions, 'session')} affected, ${count(t.failovers, 'failover')}, ${count(t.giveUps, 'give-up')}; the stock host would have failed ${count(t.stockTurnsFailed, 'turn')}`);
  // Hedges (policy/hedge.go) only when there were some: the row's hedge is off by default.
  if (t.hedges) out.push(`${count(t.hedges, 'hedge')}: the hedge answered first in ${t.hedgesWon ?? 0}, saving ${formatDuration(t.hedgeSavedMs ?? 0)} against the primary's median first token`);
  out.push('', 'Incidents');
  if (report.incidents.length === 0) out.push('  none: no breaker opened in this window');
  report.incidents.forEach((inc, i) => {
    const end = inc.ongoing || inc.end == null ? 'still open' : formatTime(inc.end).slice(11);
    const seen = inc.seenOpening ? '' : ' (opened earlier than this log shows)';
    out.push(`  #${i + 1} ${inc.channel}  ${formatTime(inc.start)} → ${end} (${formatDuration(inc.durationMs)})  cause ${inc.cause} (${inc.class})${seen}`);
    out.push(`     ${incidentNumbers(inc)}`);
    out.push(`     ${stockLine(inc.stock)}`);
  });
  out.push('', 'Channels');
  if (report.channels.length === 0) out.push('  none seen');
  else out.push(...tableLines(channelRows(report)).map((l) => `  ${l}`));
  out.push('', 'Give-ups');
  if (report.giveUps.length === 0) out.push('  none');
  for (const g of report.giveUps) {
    const tried = g.tried.length ? `; tried ${triedText(g)}` : '';
    out.push(`  ${formatTime(g.at)}  ${g.agent}  ${g.reason} (${g.code}) on ${g.channel}${tried}`);
  }
  if (report.skipped > 0) out.push('', skippedText(report));
  return out.join('\n');
}
