// @ts-check
// The report: what happened over a window of audit records, and what it
// saved. One pure function (`computeReport`) turns records into numbers; the
// text (`renderReportText`, for `/resilience report`) and the HTML page
// (report-html.js, for `make report`) only lay those numbers out, so they can
// never disagree. Nothing here reads a file or a clock: callers pass records
// and the window.
//
// What the audit log can tell (audit.js, effects.js, policy.js):
// - breaker transitions (`circuit-open|half-open|closed`): the outages;
// - the policy's inputs (`input` records): each agent's requests, its
//   request errors (provider and failure, not the model), its turn settling,
//   and each watched stream's open and first chunk (`stream-check`, with the
//   channel): requests per channel and time to first token;
// - decisions: `failover`, `give-up`, `retry`, `probe-result`, `stall`.
// A request error names only the provider, so it is put on the channel of
// that provider whose stream opened last (the failing stream); without a
// watched stream, on the channel the agent's request proposed.
import { channelText } from './channel.js';
import { formatDuration, tableLines, utcTime as formatTime } from './text.js';

/**
 * The host's retry policy when no route sets one (dsh-llm's defaults, read in
 * the installed host: DEFAULT_MAX_RETRIES 5, 500 ms doubling to a 10 s cap,
 * jitter 10%, and its retryable codes). An over-cap Retry-After is not waited
 * out: the stock host hands the failure back at once.
 */
export const STOCK_RETRY = Object.freeze({
  maxRetries: 5,
  initialDelayMs: 500,
  maxDelayMs: 10_000,
  retryableCodes: Object.freeze(['EMPTY_RESPONSE', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT']),
});
/** The adapters' default stream idle timeout: how long the stock host waits on a hung call. */
export const STOCK_STREAM_IDLE_MS = 300_000;

/** The stock host's total backoff over its whole budget (jitter averages out). */
export function stockBackoffMs(p = STOCK_RETRY) {
  let sum = 0;
  for (let i = 0; i < p.maxRetries; i++) sum += Math.min(p.initialDelayMs * 2 ** i, p.maxDelayMs);
  return sum;
}

/**
 * What the stock host does with one failure of this code: `retries` more
 * requests over `budgetMs`, then the turn fails (`retries` 0: at once).
 */
/**
 * @param {string} code
 * @param {{hung?: boolean, retryAfterMs?: any}} [o] - retryAfterMs absent: no Retry-After (undefined > n is false).
 */
export function stockOutcome(code, { hung = false, retryAfterMs } = {}) {
  if (!STOCK_RETRY.retryableCodes.includes(code)) return { retries: 0, budgetMs: 0, why: `${code} is not retried` };
  if (retryAfterMs > STOCK_RETRY.maxDelayMs) return { retries: 0, budgetMs: 0, why: 'Retry-After above its 10 s cap' };
  const backoff = stockBackoffMs();
  // A hung stream costs the adapter's idle timeout on every attempt.
  const budgetMs = hung ? backoff + (STOCK_RETRY.maxRetries + 1) * STOCK_STREAM_IDLE_MS : backoff;
  return { retries: STOCK_RETRY.maxRetries, budgetMs, why: hung ? 'each attempt hangs for the 300 s idle timeout' : undefined };
}

// A stream's open time is taken on the shim's monotonic clock and may read a
// little before the request event's wall time.
const OPEN_SLACK_MS = 50;

const keyOf = (c) => (typeof c === 'string' ? c : c && channelText(c));
const msOf = (r) => Date.parse(r.at);

/**
 * Parses one audit file's text. Bad lines are counted, never fatal: a log
 * cut by a crash must still report.
 */
export function parseAuditText(text) {
  const records = [];
  let bad = 0;
  for (const line of String(text).split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line);
      if (r && typeof r.type === 'string' && Number.isFinite(Date.parse(r.at))) records.push(r);
      else bad++;
    } catch {
      bad++;
    }
  }
  return { records, bad };
}

/** Several hosts' logs as one stream, ordered by time; each record keeps its log's index. */
export function mergeLogs(logs) {
  const all = [];
  logs.forEach((records, source) => records.forEach((r, i) => all.push({ r, source, i, t: msOf(r) })));
  all.sort((a, b) => a.t - b.t || a.source - b.source || a.i - b.i);
  return all;
}

const median = (xs, q) => {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};

/**
 * The report over [fromMs, toMs] of the merged logs. Records before the
 * window still count for the state they leave (an outage that began before
 * it); only what overlaps the window is reported.
 * @param {object[][]} logs - each host's records, as parseAuditText gives them.
 * @param {{fromMs?: number, toMs?: number}} [window] - default: first to last record.
 */
export function computeReport(logs, window = {}) {
  const merged = mergeLogs(logs);
  const fromMs = window.fromMs ?? merged[0]?.t ?? 0;
  const toMs = window.toMs ?? merged.at(-1)?.t ?? fromMs;
  const channels = new Map(); // key -> per-channel numbers
  const chan = (key) => {
    if (!channels.has(key)) {
      const slash = key.indexOf('/');
      channels.set(key, { channel: key, provider: key.slice(0, slash), model: key.slice(slash + 1),
        requests: 0, failures: 0, ttfts: [], spans: [], failovers: [] });
    }
    return channels.get(key);
  };
  const hostState = new Map(); // `${source}|${key}` -> breaker state in that host
  const worst = new Map(); // key -> the channel's state over all hosts
  const current = new Map(); // key -> its incident while not closed
  const incidents = [];
  const pending = new Map(); // key -> failed attempts since its last success (the onset of an outage)
  const streams = []; // every watched stream: channel, open time, first chunk
  const recent = new Map(); // `${source}|${key}` -> that channel's latest streams
  const lastStreams = new Map(); // `${source}|${provider}` -> its latest opened streams
  const agents = new Map(); // `${agent}` -> {cur, trouble, tried}
  const giveUps = [];
  const probes = [];

  const incidentFor = (key) => current.get(key) ?? current.get(`${key.slice(0, key.indexOf('/'))}/*`);

  const adopted = new Set(); // `${source}|${key}`: a state learnt from health, not seen happen

  function setState(source, key, state, r, t) {
    hostState.set(`${source}|${key}`, state);
    const own = `${source}|${key}`;
    if (r.adopted) adopted.add(own);
    else {
      adopted.delete(own); // its own transitions from here on
      // A close seen happen ends what other hosts only adopted: a host whose adopted breaker is
      // later merged closed writes no record of it.
      if (state === 'closed') {
        for (const k of [...adopted]) {
          if (k.slice(k.indexOf('|') + 1) !== key) continue;
          hostState.set(k, 'closed');
          adopted.delete(k);
        }
      }
    }
    let w = 'closed';
    for (const [k, s] of hostState) {
      if (k.slice(k.indexOf('|') + 1) !== key) continue;
      if (s === 'open') w = 'open';
      else if (s === 'half-open' && w === 'closed') w = 'half-open';
    }
    const was = worst.get(key) ?? 'closed';
    if (w === was) return;
    worst.set(key, w);
    const c = chan(key);
    const last = c.spans.at(-1);
    if (last && last.end === null) last.end = t;
    if (w !== 'closed') c.spans.push({ state: w, start: t, end: null });
    if (was === 'closed') {
      const inc = { channel: key, start: t, end: null, startKnown: r.type === 'circuit-open', cause: r.cause ?? '?', class: r.class ?? '?',
        sessions: new Set(), failovers: 0, failedRequests: 0, failedProbes: 0, lostMs: 0, firstFailures: [], hung: false, codes: new Set() };
      for (const f of pending.get(key) ?? []) {
        addFailure(inc, f);
        agents.get(f.agent)?.trouble?.incidents.add(inc);
      }
      pending.delete(key);
      current.set(key, inc);
      incidents.push(inc);
    } else if (w === 'closed') {
      current.get(key).end = t;
      current.delete(key);
    }
  }

  function addFailure(inc, f) {
    inc.failedRequests++;
    inc.codes.add(f.code);
    meet(inc, f);
    if (f.agent) inc.sessions.add(f.agent);
  }

  // Each session's first contact with an outage: a failure, or a request the breaker routed round.
  function meet(inc, f) {
    if (f.agent && !inc.firstFailures.some((x) => x.agent === f.agent)) inc.firstFailures.push(f);
  }

  const agentOf = (id) => {
    if (!agents.has(id)) agents.set(id, { cur: undefined, trouble: undefined, tried: [] });
    return agents.get(id);
  };

  // An agent's attempt that ended without an error: its trouble, if any, is over.
  function succeeded(a, t) {
    if (a.trouble) {
      const lost = t - a.trouble.since;
      for (const inc of a.trouble.incidents) inc.lostMs += lost;
      a.trouble = undefined;
    }
    a.tried = [];
  }

  function onInput(source, ev, t) {
    switch (ev?.kind) {
      case 'request': {
        const a = agentOf(ev.agent);
        if (a.cur && !a.cur.failed) succeeded(a, a.cur.at);
        a.cur = { at: t, proposed: keyOf(ev.proposed), failed: false };
        const inc = incidentFor(keyOf(ev.proposed) ?? '');
        if (inc) { // routed round an open channel: affected, not failed; the stock host would have sent it there
          inc.sessions.add(ev.agent);
          meet(inc, { agent: ev.agent, at: t, code: undefined });
        }
        break;
      }
      case 'stream-check': {
        const key = keyOf(ev.channel);
        const mine = recent.get(`${source}|${key}`) ?? [];
        // Its checks carry the open time rounded afresh each time: a millisecond either way is the same stream.
        let s = mine.find((x) => Math.abs(x.openedMs - ev.openedMs) <= 2);
        if (!s) {
          // The channel's previous stream answered and no error claimed it: the channel worked, so
          // failures before it are no outage's onset.
          const prev = mine.at(-1);
          if (prev && prev.firstChunkMs !== undefined && !prev.failed) pending.delete(key);
          s = { key, openedMs: ev.openedMs, firstChunkMs: undefined, failed: false };
          streams.push(s);
          mine.push(s);
          if (mine.length > 64) mine.shift(); // enough for the calls one host has open at once
          recent.set(`${source}|${key}`, mine);
          const byProvider = lastStreams.get(`${source}|${ev.channel.provider}`) ?? [];
          byProvider.push(s);
          if (byProvider.length > 64) byProvider.shift();
          lastStreams.set(`${source}|${ev.channel.provider}`, byProvider);
          chan(key).requests++;
        }
        if (ev.chunks > 0 && s.firstChunkMs === undefined) s.firstChunkMs = ev.lastChunkMs;
        break;
      }
      case 'request-error': {
        const a = agentOf(ev.agent);
        a.cur ??= { at: t, failed: false };
        if (a.cur.failed) break; // asked again after the host's retry plugin: the same attempt
        a.cur.failed = true;
        // The agent's own stream opened just after its request: the first unclaimed one since.
        const s = (lastStreams.get(`${source}|${ev.provider}`) ?? []).find((x) => !x.failed && x.openedMs >= a.cur.at - OPEN_SLACK_MS && x.openedMs <= t);
        let key = a.cur.proposed?.startsWith(`${ev.provider}/`) ? a.cur.proposed : `${ev.provider}/?`;
        if (s) {
          s.failed = true;
          key = s.key;
        }
        a.cur.key = key;
        const c = chan(key);
        c.failures++;
        const f = { agent: ev.agent, at: a.cur.at, code: ev.failure?.code ?? 'UNKNOWN', retryAfterMs: ev.failure?.providerRetryAfterMs };
        a.tried.push({ channel: key, code: f.code });
        a.trouble ??= { since: a.cur.at, incidents: new Set() };
        const inc = incidentFor(key);
        if (inc) {
          addFailure(inc, f);
          a.trouble.incidents.add(inc);
        } else {
          if (!pending.has(key)) pending.set(key, []);
          pending.get(key).push(f);
        }
        break;
      }
      case 'settled': {
        const a = agentOf(ev.agent);
        if (a.cur && !a.cur.failed) succeeded(a, a.cur.at);
        else if (a.trouble) { // the turn ended on its failure: all of it was lost
          for (const inc of a.trouble.incidents) inc.lostMs += t - a.trouble.since;
          a.trouble = undefined;
        }
        a.cur = undefined;
        break;
      }
      case 'disposed':
        agents.delete(ev.agent);
        break;
      default:
    }
  }

  for (const { r, source, t } of merged) {
    switch (r.type) {
      case 'input':
        if (r.export === 'decide') onInput(source, r.event, t);
        // A host that adopts another's (or its last run's) open breaker says so only here: an
        // outage whose opening this log never saw starts, for the report, at the adoption.
        if (r.export === 'restore') {
          for (const h of r.health?.channels ?? []) {
            const key = keyOf(h.channel);
            if (!key || (h.state !== 'open' && h.state !== 'half-open') || (worst.get(key) ?? 'closed') !== 'closed') continue;
            setState(source, key, h.state, { adopted: true, cause: h.lastCode || '?', class: '?' }, t);
          }
        }
        break;
      case 'circuit-open':
      case 'circuit-half-open':
      case 'circuit-closed':
        setState(source, keyOf(r.channel), r.type.slice('circuit-'.length), r, t);
        break;
      case 'failover': {
        const key = keyOf(r.from);
        chan(key).failovers.push({ at: t, to: keyOf(r.to), code: r.code, agent: r.agent });
        const inc = incidentFor(key);
        if (inc) {
          inc.failovers++;
          if (r.agent) inc.sessions.add(r.agent);
          // The agent's trouble belongs to the outage that made it leave, even if its failure came first.
          const a = r.agent && agents.get(r.agent);
          if (a?.trouble) a.trouble.incidents.add(inc);
        }
        break;
      }
      case 'stall': {
        const inc = incidentFor(keyOf(r.route));
        if (inc) inc.hung = true;
        break;
      }
      case 'probe-result': {
        const key = keyOf(r.channel);
        probes.push({ at: t, channel: key, ok: r.ok, code: r.code });
        const inc = incidentFor(key);
        if (inc && !r.ok) inc.failedProbes++;
        break;
      }
      case 'give-up': {
        const a = agents.get(r.agent);
        giveUps.push({ at: t, agent: r.agent, channel: keyOf(r.channel), reason: r.reason, code: r.code, tried: summarizeTried(a?.tried ?? []) });
        break;
      }
      default:
    }
  }

  // The union of each channel's (and its provider breaker's) spans, clipped to the window.
  const clip = (s) => [Math.max(s.start, fromMs), Math.min(s.end ?? toMs, toMs)];
  const downMs = (key) => {
    const provider = channels.get(key).provider;
    const parts = [...(channels.get(key).spans), ...(channels.get(`${provider}/*`)?.spans ?? [])]
      .map(clip).filter(([a, b]) => b > a).sort((x, y) => x[0] - y[0]);
    let total = 0;
    let end = -Infinity;
    for (const [a, b] of parts) {
      if (b <= end) continue;
      total += b - Math.max(a, end);
      end = b;
    }
    return total;
  };
  const spanMs = Math.max(0, toMs - fromMs);

  // A provider breaker opened because its models' breakers did (models-open) is no outage of its
  // own: its models' incidents hold the numbers, and the timeline shows its span.
  const shown = incidents
    .filter((inc) => inc.start <= toMs && (inc.end ?? toMs) >= fromMs)
    .filter((inc) => !(inc.channel.endsWith('/*') && inc.failedRequests === 0 && !/^[A-Z_]+$/.test(inc.cause)));
  const outIncidents = shown.map((inc) => {
    // The cause is the failure code that tripped it, or a word (stall, models-open).
    const code = inc.cause === 'stall' ? 'TIMEOUT' : /^[A-Z_]+$/.test(inc.cause) ? inc.cause : [...inc.codes][0] ?? inc.cause;
    const stock = stockOutcome(code, { hung: inc.hung || inc.cause === 'stall', retryAfterMs: inc.firstFailures.find((f) => f.code)?.retryAfterMs });
    const end = inc.end ?? toMs;
    // Each affected turn's first failure: the stock host would fail it if the outage outlasted its budget.
    // While it is still open, a turn whose budget has not run out yet is undecided, not saved.
    const stockFailedTurns = inc.firstFailures.filter((f) => f.at + stock.budgetMs < end).length;
    return {
      channel: inc.channel, start: inc.start, end: inc.end, durationMs: end - inc.start, ongoing: inc.end === null,
      cause: inc.cause, class: inc.class, codes: [...inc.codes].sort(), seenOpening: inc.startKnown,
      sessions: inc.sessions.size, failovers: inc.failovers, failedRequests: inc.failedRequests,
      failedProbes: inc.failedProbes, lostMs: inc.lostMs,
      stock: { code, retries: stock.retries, budgetMs: stock.budgetMs, why: stock.why,
        turnsFailed: stockFailedTurns, turnsHit: inc.firstFailures.length,
        turnsUndecided: inc.end === null ? inc.firstFailures.length - stockFailedTurns : 0 },
    };
  });

  const outChannels = [...channels.values()].map((c) => ({
    channel: c.channel, providerWide: c.model === '*', requests: c.requests, failures: c.failures,
    availability: spanMs > 0 ? 1 - downMs(c.channel) / spanMs : 1,
    ttftCount: 0, ttftP50Ms: undefined, ttftP95Ms: undefined,
    spans: c.spans.map((s) => ({ state: s.state, start: s.start, end: s.end })).filter((s) => s.start <= toMs && (s.end ?? toMs) >= fromMs),
    failovers: c.failovers.filter((f) => f.at >= fromMs && f.at <= toMs),
  }));
  const byKey = new Map(outChannels.map((c) => [c.channel, c]));
  const ttfts = new Map();
  for (const s of streams) {
    if (s.failed || s.firstChunkMs === undefined || s.openedMs < fromMs || s.openedMs > toMs) continue;
    if (!ttfts.has(s.key)) ttfts.set(s.key, []);
    ttfts.get(s.key).push(Math.max(0, s.firstChunkMs - s.openedMs));
  }
  for (const [key, xs] of ttfts) Object.assign(/** @type {object} */ (byKey.get(key)), { ttftCount: xs.length, ttftP50Ms: median(xs, 0.5), ttftP95Ms: median(xs, 0.95) });
  outChannels.sort((a, b) => a.channel.localeCompare(b.channel));

  return {
    fromMs, toMs, logs: logs.length, records: merged.length,
    incidents: outIncidents,
    channels: outChannels,
    giveUps: giveUps.filter((g) => g.at >= fromMs && g.at <= toMs),
    probes: probes.filter((p) => p.at >= fromMs && p.at <= toMs),
    totals: {
      incidents: outIncidents.length,
      failovers: outIncidents.reduce((n, i) => n + i.failovers, 0),
      sessions: new Set(shown.flatMap((inc) => [...inc.sessions])).size, // a session two outages hit is one session
      stockTurnsFailed: outIncidents.reduce((n, i) => n + i.stock.turnsFailed, 0),
      giveUps: giveUps.filter((g) => g.at >= fromMs && g.at <= toMs).length,
    },
  };
}

/** What a session tried since its last success: each channel once, in order, with its codes and attempts. */
function summarizeTried(tried) {
  const out = [];
  for (const x of tried) {
    const same = out.find((y) => y.channel === x.channel && y.code === x.code);
    if (same) same.count++;
    else out.push({ channel: x.channel, code: x.code, count: 1 });
  }
  return out;
}

/** A give-up's tried list, the same words in text and HTML. */
export const triedText = (g) => g.tried.map((x) => `${x.channel} (${x.code}${x.count > 1 ? ` ×${x.count}` : ''})`).join(', ');

/** A duration for people, and a UTC time to the second (text.js): the report's words. */
export { formatDuration, formatTime };
/** A share, floored: a channel down for seconds of a day must not read 100%. */
export function formatPercent(x) {
  if (x >= 1) return '100%';
  const places = x >= 0.99 ? 3 : 2;
  return `${(Math.floor(x * 100 * 10 ** places + 1e-6) / 10 ** places).toFixed(places)}%`;
}
const pct = formatPercent;

/** The stock host's line for an incident, the same words in text and HTML. */
export function stockLine(st) {
  const undecided = st.turnsUndecided > 0 ? ` so far (${st.turnsUndecided} more if it lasts ~${formatDuration(st.budgetMs)} past their first failure)` : '';
  const verdict = st.turnsHit > 0 ? `: ${st.turnsFailed} of ${st.turnsHit} turns would have failed${undecided}` : '';
  if (st.retries === 0) return `stock host: the turn fails at once (${st.why})${verdict}`;
  const hung = st.why ? `, ${st.why}` : '';
  return `stock host: ${st.retries} retries over ~${formatDuration(st.budgetMs)}${hung}, then the turn fails with ${st.code}${verdict}`;
}

/** The incident's one-line numbers, the same words in text and HTML. */
export function incidentNumbers(inc) {
  const probes = inc.failedProbes ? ` · failed probes ${inc.failedProbes}` : '';
  return `sessions ${inc.sessions} · failovers ${inc.failovers} · failed requests ${inc.failedRequests}${probes} · time lost ${formatDuration(inc.lostMs)}`;
}

/** The channel table's rows, header first. */
export function channelRows(report) {
  const rows = [['channel', 'availability', 'requests', 'failed', 'failovers', 'ttft p50', 'ttft p95']];
  for (const c of report.channels) {
    if (c.providerWide) continue; // a lane in the timeline; its time counts in its models' availability
    rows.push([c.channel, pct(c.availability), String(c.requests), String(c.failures), String(c.failovers.length),
      c.ttftCount ? formatDuration(c.ttftP50Ms) : '-', c.ttftCount ? formatDuration(c.ttftP95Ms) : '-']);
  }
  return rows;
}

const count = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** The text form of a report (`/resilience report`). */
export function renderReportText(report) {
  const out = [];
  const hosts = report.logs === 1 ? '1 log' : `${report.logs} logs`;
  out.push(`dsh-resilience report, ${formatTime(report.fromMs)} → ${formatTime(report.toMs)} UTC (${formatDuration(report.toMs - report.fromMs)}, ${hosts})`);
  const t = report.totals;
  out.push(`${count(t.incidents, 'incident')}, ${count(t.sessions, 'session')} affected, ${count(t.failovers, 'failover')}, ${count(t.giveUps, 'give-up')}; the stock host would have failed ${count(t.stockTurnsFailed, 'turn')}`);
  out.push('', 'Incidents');
  if (report.incidents.length === 0) out.push('  none: no breaker opened in this window');
  report.incidents.forEach((inc, i) => {
    const end = inc.ongoing ? 'still open' : formatTime(inc.end).slice(11);
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
  return out.join('\n');
}
