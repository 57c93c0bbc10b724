// @ts-check
// The report as one self-contained HTML page (`make report`): a timeline
// picture first, one lane per channel with its open and half-open spans and
// failover marks, then the same numbers as the text, in the same words
// (report.js computes and words them; this file only lays them out).
import { channelRows, formatDuration, formatPercent, formatTime, incidentNumbers, skippedText, stockLine, triedText } from './report.js';
import { pictureDuration, pictureWords } from './report-words.js';

/** @import { Report, ReportSpan } from './policy-types.js' */

/** @type {Record<string, string>} */
const ENTITIES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
/** @param {unknown} s */
const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ENTITIES[c]);

const MIN = 60_000;
const STEPS = [MIN, 5 * MIN, 10 * MIN, 15 * MIN, 30 * MIN, 60 * MIN, 2 * 60 * MIN, 3 * 60 * MIN, 6 * 60 * MIN, 12 * 60 * MIN, 24 * 60 * MIN];

/**
 * Axis ticks: the smallest round step giving at most `max` ticks.
 * @param {number} fromMs
 * @param {number} toMs
 */
export function ticks(fromMs, toMs, max = 12) {
  const span = Math.max(1, toMs - fromMs);
  const step = STEPS.find((s) => span / s <= max) ?? Math.ceil(span / max / /** @type {number} */ (STEPS.at(-1))) * /** @type {number} */ (STEPS.at(-1));
  const out = [];
  for (let t = Math.ceil(fromMs / step) * step; t <= toMs; t += step) out.push(t);
  return { step, ticks: out };
}

const W = 1200;
const LABEL = 300;
const LANE = 56;
const TOP = 40;

/**
 * Back-to-back spans as one [start, end] (end null: still not closed).
 * @param {ReportSpan[]} spans
 */
function outages(spans) {
  /** @type {[number, number | null | undefined][]} */
  const out = [];
  for (const s of spans) {
    const last = out.at(-1);
    if (last && last[1] != null && last[1] >= s.start) last[1] = s.end;
    else out.push([s.start, s.end]);
  }
  return out;
}

/**
 * The timeline as an inline SVG, worded for `locale` (en when absent).
 * @param {Report} report
 * @param {{locale?: string}} [opts]
 */
export function timelineSvg(report, { locale } = {}) {
  const w = pictureWords(locale);
  const lanes = [...report.channels].sort((a, b) => {
    const pa = a.channel.slice(0, a.channel.indexOf('/'));
    const pb = b.channel.slice(0, b.channel.indexOf('/'));
    return pa.localeCompare(pb) || Number(a.providerWide) - Number(b.providerWide) || a.channel.localeCompare(b.channel);
  });
  const plotW = W - LABEL - 20;
  /** @param {number} t */
  const x = (t) => LABEL + ((Math.min(Math.max(t, report.fromMs), report.toMs) - report.fromMs) / Math.max(1, report.toMs - report.fromMs)) * plotW;
  const laneY = new Map(lanes.map((c, i) => [c.channel, TOP + i * LANE]));
  const height = TOP + lanes.length * LANE + 30;
  const parts = [];
  const { step, ticks: ts } = ticks(report.fromMs, report.toMs);
  for (const t of ts) {
    const label = step >= 24 * 60 * MIN || new Date(t).getUTCHours() + new Date(t).getUTCMinutes() === 0
      ? formatTime(t).slice(5, 16) : formatTime(t).slice(11, 16);
    parts.push(`<line x1="${x(t)}" x2="${x(t)}" y1="${TOP - 6}" y2="${height - 26}" class="grid"/>`,
      `<text x="${x(t)}" y="${height - 10}" class="tick">${esc(label)}</text>`);
  }
  lanes.forEach((c, i) => {
    const y = /** @type {number} */ (laneY.get(c.channel)); // every lane has its row
    parts.push(`<text x="${LABEL - 12}" y="${y + 29}" class="lane">${esc(c.channel)}</text>`,
      `<text x="${LABEL - 12}" y="${y + 43}" class="avail">${esc(c.providerWide ? w('providerWide') : w('available', { pct: formatPercent(c.availability) }))}</text>`,
      `<rect x="${LABEL}" y="${y + 16 + (LANE - 26) / 2 - 3}" width="${plotW}" height="6" rx="3" class="up"/>`);
    // The outage as one red bar (open and half-open spans back to back), the probes' half-open
    // moments drawn over it in amber: a bar per outage reads at a glance, the probes on a closer look.
    for (const [start, end] of outages(c.spans)) {
      const x0 = x(start);
      const x1 = Math.max(x(end ?? report.toMs), x0 + 3); // a span of seconds in a day still shows
      const tip = w('notClosed', { channel: c.channel, from: formatTime(start), to: end ? formatTime(end) : w('stillOpen'), span: pictureDuration(locale, (end ?? report.toMs) - start) });
      parts.push(`<rect x="${x0}" y="${y + 16}" width="${x1 - x0}" height="${LANE - 26}" rx="3" class="open"><title>${esc(tip)}</title></rect>`);
    }
    for (const s of c.spans.filter((sp) => sp.state === 'half-open')) {
      const x0 = x(s.start);
      const x1 = Math.max(x(s.end ?? report.toMs), x0 + 1.5);
      const tip = w('probing', { channel: c.channel, from: formatTime(s.start), to: s.end ? formatTime(s.end) : w('now') });
      parts.push(`<rect x="${x0}" y="${y + 16}" width="${x1 - x0}" height="${LANE - 26}" class="half"><title>${esc(tip)}</title></rect>`);
    }
    if (i < lanes.length - 1) parts.push(`<line x1="12" x2="${W - 12}" y1="${y + LANE}" y2="${y + LANE}" class="sep"/>`);
  });
  // Failovers: a line from the channel left to the one taken, an arrowhead on the target.
  for (const c of lanes) {
    for (const f of c.failovers) {
      const mid = 16 + (LANE - 26) / 2;
      const y0 = /** @type {number} */ (laneY.get(c.channel)) + mid;
      const y1 = f.to != null && laneY.has(f.to) ? /** @type {number} */ (laneY.get(f.to)) + mid : y0 + LANE / 2;
      const xf = x(f.at);
      const dir = y1 >= y0 ? 1 : -1;
      parts.push(`<g class="failover"><title>${esc(w('failoverTip', { at: formatTime(f.at), from: c.channel, to: f.to, code: f.code }))}</title>`
        + `<line x1="${xf}" x2="${xf}" y1="${y0}" y2="${y1 - dir * 5}"/>`
        + `<path d="M${xf - 4} ${y1 - dir * 7} L${xf + 4} ${y1 - dir * 7} L${xf} ${y1} Z"/></g>`);
    }
  }
  for (const g of report.giveUps) {
    const y = (laneY.get(g.channel ?? '') ?? TOP) + 16 + (LANE - 26) / 2;
    const xg = x(g.at);
    parts.push(`<g class="giveup"><title>${esc(w('giveUpTip', { at: formatTime(g.at), reason: g.reason, code: g.code }))}</title>`
      + `<circle cx="${xg}" cy="${y}" r="8.5"/><path d="M${xg - 5} ${y - 5} L${xg + 5} ${y + 5} M${xg - 5} ${y + 5} L${xg + 5} ${y - 5}"/></g>`);
  }
  report.incidents.forEach((inc, i) => {
    if (!laneY.has(inc.channel)) return;
    parts.push(`<text x="${x(inc.start)}" y="${/** @type {number} */ (laneY.get(inc.channel)) + 12}" class="num">#${i + 1}</text>`);
  });
  const legend = [[w('open'), 'open'], [w('halfOpen'), 'half'], [w('closed'), 'up']]
    .map(([name, cls], i) => `<rect x="${LABEL + i * 170}" y="8" width="14" height="14" rx="2" class="${cls}"/><text x="${LABEL + 20 + i * 170}" y="19" class="legend">${esc(name)}</text>`)
    .join('') + `<g class="failover"><line x1="${LABEL + 517}" x2="${LABEL + 517}" y1="6" y2="16"/><path d="M${LABEL + 513} 16 L${LABEL + 521} 16 L${LABEL + 517} 23 Z"/></g>`
    + `<text x="${LABEL + 528}" y="19" class="legend">${esc(w('failover'))}</text>`
    + `<g class="giveup"><path d="M${LABEL + 610} 9 L${LABEL + 620} 19 M${LABEL + 610} 19 L${LABEL + 620} 9"/></g><text x="${LABEL + 628}" y="19" class="legend">${esc(w('giveUp'))}</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" class="dshr-timeline" viewBox="0 0 ${W} ${height}" width="100%" role="img" aria-label="${esc(w('aria'))}"><style>${SVG_STYLE}</style>${legend}${parts.join('')}</svg>`;
}

// The picture styles itself, so the web can show the same SVG on its own.
// Its colours are the host's theme tokens where the host defines them (the
// web view, light or dark as the host is), else a light palette, or a dark
// one when the reader's system asks for dark (the page `make report` writes).
const LIGHT = '--fg:#1d2430;--muted:#6b7585;--legend:#3d4656;--grid:#eceef2;--sep:#f0f1f4;--open:#d64545;--half:#e8a33d;--up:#cfe8d6;--failover:#3b6fd8;--giveup:#222;--bg:#fff;--num:#9b2c2c';
const DARK = '--fg:#e4e7ec;--muted:#9aa3b2;--legend:#c3c9d4;--grid:#2c313a;--sep:#262a31;--open:#e05d5d;--half:#e8a33d;--up:#2e5a3c;--failover:#6f95ee;--giveup:#e4e7ec;--bg:#16181d;--num:#ff9a9a';
const TOKENS = 'fill:var(--dsw-alias-label-primary,var(--fg))';
const SVG_STYLE = `svg.dshr-timeline{${LIGHT}}@media (prefers-color-scheme:dark){svg.dshr-timeline{${DARK}}}
svg.dshr-timeline .grid{stroke:var(--dsw-alias-border-l2,var(--grid))}svg.dshr-timeline .sep{stroke:var(--dsw-alias-border-l1,var(--sep))}
svg.dshr-timeline .tick{font-size:11px;fill:var(--dsw-alias-label-tertiary,var(--muted));text-anchor:middle}
svg.dshr-timeline .lane{font-size:13px;${TOKENS};text-anchor:end;font-family:ui-monospace,monospace}
svg.dshr-timeline .avail{font-size:11px;fill:var(--dsw-alias-label-tertiary,var(--muted));text-anchor:end}
svg.dshr-timeline .legend{font-size:12px;fill:var(--dsw-alias-label-secondary,var(--legend))}
svg.dshr-timeline .num{font-size:11px;fill:var(--dshr-num,var(--num));font-weight:700;pointer-events:none}
svg.dshr-timeline .open{fill:var(--dsw-alias-state-error-primary,var(--open))}svg.dshr-timeline .half{fill:var(--dsw-alias-state-warn-primary,var(--half))}
svg.dshr-timeline .up{fill:var(--dshr-up,var(--up))}
svg.dshr-timeline .failover line{stroke:var(--dsw-alias-brand-primary,var(--failover));stroke-width:1.5}svg.dshr-timeline .failover path{fill:var(--dsw-alias-brand-primary,var(--failover))}
svg.dshr-timeline .giveup circle{fill:var(--dsw-alias-bg-layer-1,var(--bg))}svg.dshr-timeline .giveup path{stroke:var(--dsw-alias-label-primary,var(--giveup));stroke-width:2.4}`;

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:#1d2430;background:#f6f7f9;margin:0;padding:24px 32px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.sub{color:#5b6575;margin-bottom:16px}
.cards{display:flex;gap:12px;flex-wrap:wrap;margin:12px 0 18px}
.card{background:#fff;border:1px solid #e2e5ea;border-radius:8px;padding:10px 16px;min-width:120px}
.card b{display:block;font-size:22px}.card span{color:#5b6575;font-size:12px}
.panel{background:#fff;border:1px solid #e2e5ea;border-radius:8px;padding:12px}
table{border-collapse:collapse;background:#fff;border:1px solid #e2e5ea;border-radius:8px;overflow:hidden;width:100%}
th,td{text-align:left;padding:6px 10px;border-bottom:1px solid #eef0f3;vertical-align:top}
th{background:#f0f2f5;font-weight:600;font-size:12px;color:#3d4656}
td.mono{font-family:ui-monospace,monospace;font-size:13px;white-space:nowrap}.stock{color:#8a2a2a}
.none{color:#5b6575}
@media (prefers-color-scheme:dark){body{color:#e4e7ec;background:#0f1115}.sub,.card span,.none{color:#9aa3b2}
.card,.panel,table{background:#16181d;border-color:#2c313a}th{background:#1d2027;color:#c3c9d4}th,td{border-bottom-color:#262a31}.stock{color:#ff9a9a}}`;

/**
 * The whole page.
 * @param {Report} report
 */
export function renderReportHtml(report, { title = 'dsh-resilience report' } = {}) {
  const t = report.totals;
  /**
   * @param {number} n
   * @param {string} label
   */
  const card = (n, label) => `<div class="card"><b>${esc(n)}</b><span>${esc(label)}</span></div>`;
  const incidents = report.incidents.length === 0
    ? '<p class="none">none: no breaker opened in this window</p>'
    : `<table><tr><th>#</th><th>channel</th><th>start → end</th><th>cause</th><th>what it cost, and what the stock host would have done</th></tr>${
      report.incidents.map((inc, i) => `<tr><td>${i + 1}</td><td class="mono">${esc(inc.channel)}</td><td>${esc(formatTime(inc.start))} → ${
        esc(inc.ongoing || inc.end == null ? 'still open' : formatTime(inc.end).slice(11))}<br>${esc(formatDuration(inc.durationMs))}</td><td>${esc(inc.cause)} (${esc(inc.class)})</td><td>${
        esc(incidentNumbers(inc))}<br><span class="stock">${esc(stockLine(inc.stock))}</span></td></tr>`).join('')}</table>`;
  const rows = channelRows(report);
  const channels = `<table><tr>${rows[0].map((h) => `<th>${esc(h)}</th>`).join('')}</tr>${
    rows.slice(1).map((r) => `<tr>${r.map((c, i) => `<td${i === 0 ? ' class="mono"' : ''}>${esc(c)}</td>`).join('')}</tr>`).join('')}</table>`;
  const giveUps = report.giveUps.length === 0 ? '<p class="none">none</p>'
    : `<table><tr><th>time</th><th>session</th><th>reason</th><th>channel</th><th>tried</th></tr>${report.giveUps.map((g) => `<tr><td>${esc(formatTime(g.at))}</td><td class="mono">${esc(g.agent)}</td><td>${esc(g.reason)} (${esc(g.code)})</td><td class="mono">${esc(g.channel)}</td><td>${esc(triedText(g) || '-')}</td></tr>`).join('')}</table>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><meta name="color-scheme" content="light dark">
<title>${esc(title)}</title><style>${STYLE}</style></head><body>
<h1>${esc(title)}</h1>
<div class="sub">${esc(formatTime(report.fromMs))} → ${esc(formatTime(report.toMs))} UTC · ${esc(formatDuration(report.toMs - report.fromMs))} · ${report.logs} ${report.logs === 1 ? 'log' : 'logs'} merged · ${report.records} records${report.skipped > 0 ? ` · ${esc(skippedText(report))}` : ''}</div>
<div class="cards">${card(t.incidents, 'incidents')}${card(t.failovers, 'failovers')}${card(t.sessions, 'sessions affected')}${card(t.stockTurnsFailed, 'turns the stock host would have failed')}${card(t.giveUps, 'give-ups')}</div>
<div class="panel">${timelineSvg(report)}</div>
<h2>Incidents</h2>${incidents}
<h2>Channels</h2>${channels}
<h2>Give-ups</h2>${giveUps}
</body></html>
`;
}
