// The report: small hand-made logs, each a table row with the numbers it
// must give, then the recorded dead-primary log. The module computes
// (policy/report, whose golden tests hold every number); these check the
// shim's half: reading, batching, and the words (report.js, report-html.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileModule } from '../engine.js';
import { renderReportText } from '../report.js';
import { parseWindow } from '../report-command.js';
import { reportOfLines, reportOfLogs } from '../report-logs.js';

const compiled = await compileModule();
/**
 * The report over hand-made logs (each a list of records, or of lines).
 * @param {(object | string)[][]} logs
 * @param {{fromMs?: number, toMs?: number}} [window]
 */
const report = (logs, window) => reportOfLines(compiled, logs.map((rs) => () => rs.map((r) => (typeof r === 'string' ? r : JSON.stringify(r)))), window);

const T0 = Date.parse('2026-12-01T00:00:00Z');
const at = (s) => new Date(T0 + s * 1000).toISOString();
const A = { provider: 'p', model: 'a' };
const B = { provider: 'q', model: 'b' };
const input = (s, event) => ({ at: at(s), type: 'input', export: 'decide', nowMs: T0 + s * 1000, event });
const request = (s, agent, ch = A) => input(s, { kind: 'request', agent, proposed: ch });
const open = (s, ch) => input(s, { kind: 'stream-check', channel: ch, openedMs: T0 + s * 1000, chunks: 0, cancelled: false });
const chunk = (s, ch, first) => input(s, { kind: 'stream-check', channel: ch, openedMs: T0 + s * 1000, chunks: 1, cancelled: false, lastChunkMs: T0 + first * 1000 });
const error = (s, agent, code = 'RATE_LIMIT', provider = 'p') => input(s, { kind: 'request-error', agent, provider, failure: { code }, phase: 'before-host', rand: 0 });
const settled = (s, agent) => input(s, { kind: 'settled', agent });
const circuit = (s, to, ch, cause = 'RATE_LIMIT') => ({ at: at(s), type: `circuit-${to}`, channel: ch, from: 'x', cause, class: 'transient' });
const failover = (s, agent, from = A, to = B, code = 'RATE_LIMIT') => ({ at: at(s), type: 'failover', agent, from, to, code, class: 'transient' });

/** One failed attempt on A: the request, its stream, the error. */
const failA = (s, agent, code) => [request(s, agent), open(s, A), error(s + 0.5, agent, code)];
/** One good attempt on B after a failover. */
const okB = (s, agent) => [request(s, agent), open(s, B), chunk(s, B, s + 0.2)];

// An outage of A from 10 s to 70 s: three failures trip it, one failover, a failed probe, then closed.
const OUTAGE = [
  ...failA(8, 's1'), ...failA(8.6, 's1'), ...failA(9.4, 's1'),
  circuit(10, 'open', A), failover(10, 's1'), ...okB(10, 's1'), settled(11, 's1'),
  ...failA(20, 's2'), failover(21, 's2'), ...okB(21, 's2'), settled(22, 's2'),
  circuit(40, 'half-open', A, 'cooled-down'), { at: at(40), type: 'probe-result', channel: A, ok: false, code: 'RATE_LIMIT' },
  circuit(40, 'open', A), circuit(70, 'half-open', A, 'cooled-down'), circuit(71, 'closed', A, 'recovered'),
];

test('incidents from hand-made logs', async () => {
  const rows = [
    {
      name: 'no records: nothing to report',
      logs: [[]],
      want: { incidents: [], channels: 0 },
    },
    {
      name: 'one outage: onset failures, failovers, sessions, time lost',
      logs: [OUTAGE],
      window: { fromMs: T0, toMs: T0 + 100_000 },
      want: {
        incidents: [{ channel: 'p/a', start: T0 + 10_000, end: T0 + 71_000, durationMs: 61_000, cause: 'RATE_LIMIT', sessions: 2, failovers: 2,
          failedRequests: 4, failedProbes: 1, lostMs: 2000 + 1000 }],
        channels: 2,
      },
    },
    {
      name: 'two hosts: their open spans of one channel are one outage',
      logs: [[circuit(10, 'open', A), circuit(40, 'closed', A)], [circuit(20, 'open', A), circuit(60, 'closed', A)]],
      window: { fromMs: T0, toMs: T0 + 100_000 },
      want: { incidents: [{ channel: 'p/a', start: T0 + 10_000, end: T0 + 60_000, durationMs: 50_000 }], channels: 1 },
    },
    {
      name: 'an outage before the window is left out; one still open at its end is ongoing',
      logs: [[circuit(10, 'open', A), circuit(20, 'closed', A), circuit(90, 'open', B, 'QUOTA')]],
      window: { fromMs: T0 + 50_000, toMs: T0 + 100_000 },
      want: { incidents: [{ channel: 'q/b', start: T0 + 90_000, end: null, ongoing: true, durationMs: 10_000, cause: 'QUOTA' }], channels: 2 },
    },
  ];
  for (const row of rows) {
    const r = await report(row.logs, row.window);
    assert.equal(r.incidents.length, row.want.incidents.length, row.name);
    row.want.incidents.forEach((w, i) => {
      for (const [k, v] of Object.entries(w)) assert.deepEqual(r.incidents[i][k], v, `${row.name}: incident ${i} ${k}`);
    });
    assert.equal(r.channels.length, row.want.channels, row.name);
  }
});

test('availability: open and half-open time over the window, the provider breaker counted too', async () => {
  const rows = [
    { name: 'a channel down 61 s of 100 s', logs: [OUTAGE], channel: 'p/a', want: 0.39 },
    { name: 'its failover target never down', logs: [OUTAGE], channel: 'q/b', want: 1 },
    { name: 'two hosts overlapping count once', logs: [[circuit(10, 'open', A), circuit(40, 'closed', A)], [circuit(20, 'open', A), circuit(60, 'closed', A)]], channel: 'p/a', want: 0.5 },
    { name: 'the provider breaker takes every model of it down', logs: [[request(1, 's', A), open(1, A), circuit(30, 'open', { provider: 'p', model: '*' }, 'models-open'),
      circuit(50, 'closed', { provider: 'p', model: '*' }, 'recovered')]], channel: 'p/a', want: 0.8 },
  ];
  for (const row of rows) {
    const c = (await report(row.logs, { fromMs: T0, toMs: T0 + 100_000 })).channels.find((x) => x.channel === row.channel);
    assert.ok(Math.abs(c.availability - row.want) < 1e-9, `${row.name}: ${c.availability}`);
  }
});

test('the stock host: the turns it would have failed', async () => {
  // s1 failed first at 8 s and s2 at 20 s; the outage ran to 71 s: both turns past 15.5 s of retries.
  const long = (await report([OUTAGE], { fromMs: T0, toMs: T0 + 100_000 })).incidents[0].stock;
  assert.deepEqual([long.turnsFailed, long.turnsHit, long.code], [2, 2, 'RATE_LIMIT']);
  // Closed after 10 s: the stock host's retries would have outlasted it.
  const short = (await report([[...failA(8, 's1'), circuit(9, 'open', A), circuit(18, 'closed', A, 'recovered')]])).incidents[0].stock;
  assert.deepEqual([short.turnsFailed, short.turnsHit], [0, 1]);
});

test('time to first token: answered streams only, per channel', async () => {
  const log = [
    request(0, 's'), open(0, A), chunk(0, A, 1), settled(2, 's'),
    request(3, 's'), open(3, A), chunk(3, A, 3.5), settled(4, 's'),
    request(5, 's'), open(5, A), chunk(5, A, 5.1), error(5.5, 's'), // an error finish is a chunk too, but no token
    request(6, 's'), open(6, A), chunk(6, A, 9), settled(10, 's'),
  ];
  const c = (await report([log])).channels.find((x) => x.channel === 'p/a');
  assert.deepEqual([c.requests, c.failures, c.ttftCount, c.ttftP50Ms, c.ttftP95Ms], [4, 1, 3, 1000, 3000]);
});

test('give-ups list what the session tried', async () => {
  const log = [
    ...failA(0, 's'), circuit(1, 'open', A), failover(1, 's'),
    request(2, 's', B), open(2, B), error(2.5, 's', 'SERVER', 'q'),
    { at: at(3), type: 'give-up', agent: 's', channel: B, reason: 'no-routable-fallback', code: 'SERVER' },
  ];
  const r = await report([log]);
  assert.deepEqual(r.giveUps.map((g) => [g.reason, g.code, g.channel, g.tried.map((x) => `${x.channel} ${x.code}`)]),
    [['no-routable-fallback', 'SERVER', 'q/b', ['p/a RATE_LIMIT', 'q/b SERVER']]]);
  assert.match(renderReportText(r), /no-routable-fallback \(SERVER\) on q\/b; tried p\/a \(RATE_LIMIT\), q\/b \(SERVER\)/);
});

test('hedges are counted in the totals and the text, and absent without any', async () => {
  const hedge = (s, winner, extra = {}) => ({ at: at(s), type: 'hedge', agent: 's', from: A, to: B, afterMs: 2000, reason: 'hedge.afterMs', winner, loserWaitMs: 2500, ...extra });
  const r = await report([[hedge(1, 'hedge', { savedMs: 17_500 }), hedge(2, 'primary'), hedge(3, 'none', { end: 'hedge-failed', code: 'SERVER' })]]);
  assert.deepEqual([r.totals.hedges, r.totals.hedgesWon, r.totals.hedgeSavedMs], [3, 1, 17_500]);
  assert.match(renderReportText(r), /3 hedges: the hedge answered first in 1, saving 18 s against the primary's median first token/);
  const none = await report([[request(1, 's')]]);
  assert.equal(none.totals.hedges, undefined);
  assert.doesNotMatch(renderReportText(none), /hedge/);
});

test('the text shows the numbers the report holds', async () => {
  const r = await report([OUTAGE], { fromMs: T0, toMs: T0 + 100_000 });
  const text = renderReportText(r);
  assert.match(text, /1 incident, 2 sessions affected, 2 failovers, 0 give-ups; the stock host would have failed 2 turns/);
  assert.match(text, /#1 p\/a {2}2026-12-01 00:00:10 → 00:01:11 \(1 min 1 s\) {2}cause RATE_LIMIT \(transient\)/);
  assert.match(text, /sessions 2 · failovers 2 · failed requests 4 · failed probes 1 · time lost 3\.0 s/);
  assert.match(text, /stock host: 5 retries over ~16 s, then the turn fails with RATE_LIMIT: 2 of 2 turns would have failed/);
  assert.match(text, /p\/a +39\.00% +4 +4 +2 /);
  assert.match(text, /q\/b +100% +2 +0 +0 +200 ms +200 ms/);
});

test('windows parsed', () => {
  assert.deepEqual(['24h', '7d', '90h', '0h', 'week', undefined].map((w) => parseWindow(w)), [86_400_000, 604_800_000, 324_000_000, undefined, undefined, 86_400_000]);
});

test('records it cannot use are skipped and counted, never thrown', async () => {
  const log = [
    '{"at":"2026-12-01T00:00:00Z","type":"boot"}', 'not json', '{"type":"no-time"}', '', 'null',
    { at: at(1), type: 'input', export: 'restore', health: { channels: [null, { channel: A, state: 'open' }] } },
    { at: at(2), type: 'failover', agent: 's', to: B, code: 'SERVER' },
    input(3, { kind: 'stream-check', openedMs: T0 + 3000, chunks: 0 }),
    ...OUTAGE,
  ];
  const r = await report([log], { fromMs: T0, toMs: T0 + 100_000 });
  assert.deepEqual([r.records, r.skipped], [OUTAGE.length + 1, 6], 'the blank line is nothing');
  assert.equal(r.incidents.length, 1, 'the good records still report');
  assert.match(renderReportText(r), /\n\n6 records skipped: unreadable or malformed$/);
  const { renderReportHtml } = await import('../report-html.js');
  assert.match(renderReportHtml(r), / · 6 records skipped: unreadable or malformed<\/div>/);
});

test('logs are read as streams: a line past the bound is cut and skipped, a torn one skipped, CRLF read', async (t) => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { auditLines } = await import('../report-logs.js');
  const dir = await mkdtemp(join(tmpdir(), 'dshr-report-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.jsonl');
  const long = JSON.stringify({ at: at(0), type: 'boot', pad: 'x'.repeat(3 << 20) });
  await writeFile(path, [long, ...OUTAGE.map((r) => JSON.stringify(r)), '{"at":"2026-12-0'].join('\r\n'));
  const lines = [];
  for await (const l of auditLines([join(dir, 'absent'), path], 1 << 20)) lines.push(l);
  assert.equal(lines.length, OUTAGE.length + 2);
  assert.equal(Buffer.byteLength(lines[0]), (1 << 20) + 1, 'cut to a byte over the bound, never held whole');
  const r = await reportOfLogs(compiled, [[path]], { fromMs: T0, toMs: T0 + 100_000 });
  assert.deepEqual([r.records, r.skipped, r.incidents.length], [OUTAGE.length, 2, 1]);
});

test('the recorded dead-primary log: a 429 burst trips the primary, one failover to the secondary', async () => {
  const r = await reportOfLogs(compiled, [[new URL('../../testhost/testdata/dead-primary-audit.jsonl', import.meta.url).pathname]]);
  assert.equal(r.incidents.length, 1);
  const [inc] = r.incidents;
  assert.deepEqual([inc.channel, inc.cause, inc.sessions, inc.failovers, inc.failedRequests, inc.ongoing],
    ['deepseek-official/deepseek-v4-flash', 'RATE_LIMIT', 1, 1, 3, true]);
  // From the first failed request's start (43.327) to the secondary's (43.588).
  assert.equal(inc.lostMs, 261);
  const byName = Object.fromEntries(r.channels.map((c) => [c.channel, c]));
  assert.deepEqual([byName['deepseek-official/deepseek-v4-flash'].requests, byName['mock/mock-b'].requests, byName['mock/mock-b'].ttftP50Ms], [3, 1, 96]);
});

test('who counts: routed-round sessions, concurrent streams, provider breakers', async () => {
  const P = { provider: 'p', model: '*' };
  const A2 = { provider: 'p', model: 'a2' };
  const log = [
    // Two agents' streams on one provider at once: each failure is its own agent's stream.
    request(0, 'x', A), open(0, A), request(0.1, 'y', A2), open(0.1, A2), error(0.3, 'y', 'SERVER'), error(0.4, 'x', 'SERVER'),
    circuit(1, 'open', A, 'SERVER'), circuit(1, 'open', A2, 'SERVER'), circuit(1, 'open', P, 'models-open'),
    // z meets the outage only as a request the breaker routes round.
    request(5, 'z', A), open(5, B), chunk(5, B, 5.5), settled(6, 'z'),
    circuit(100, 'closed', A, 'recovered'), circuit(100, 'closed', A2, 'recovered'), circuit(100, 'closed', P, 'recovered'),
  ];
  const r = await report([log], { fromMs: T0, toMs: T0 + 200_000 });
  assert.deepEqual(r.incidents.map((i) => [i.channel, i.failedRequests, i.sessions, i.stock.turnsHit, i.stock.turnsFailed]),
    [['p/a', 1, 2, 2, 2], ['p/a2', 1, 1, 1, 1]], 'the provider breaker is a lane, not an incident');
  assert.deepEqual(r.channels.map((c) => [c.channel, c.failures]), [['p/*', 0], ['p/a', 1], ['p/a2', 1], ['q/b', 0]]);
  assert.ok(!renderReportText(r).includes('p/*'), 'nor a row of the channel table');
});

test('the HTML page holds the text\'s numbers and a lane per channel', async () => {
  const { renderReportHtml, ticks } = await import('../report-html.js');
  const r = await report([OUTAGE], { fromMs: T0, toMs: T0 + 100_000 });
  const html = renderReportHtml(r);
  const text = renderReportText(r);
  for (const line of text.split('\n').filter((l) => /sessions \d|stock host:/.test(l))) assert.ok(html.includes(line.trim()), line);
  assert.match(html, /<td class="mono">p\/a<\/td><td>39\.00%<\/td><td>4<\/td><td>4<\/td><td>2<\/td>/);
  assert.equal((html.match(/class="lane"/g) ?? []).length, 2);
  assert.equal((html.match(/<g class="failover"><title>/g) ?? []).length, 2);
  assert.ok(!/<script/i.test(html), 'a static page');
  assert.deepEqual(ticks(T0, T0 + 6 * 3600_000).step, 1800_000);
  assert.deepEqual(ticks(T0, T0 + 600_000).step, 60_000);
});

test('the timeline follows the theme: colours by class and token, a dark palette, no fixed fills', async () => {
  const { renderReportHtml, timelineSvg } = await import('../report-html.js');
  const r = await report([OUTAGE], { fromMs: T0, toMs: T0 + 100_000 });
  const svg = timelineSvg(r);
  assert.doesNotMatch(svg, /\sfill="/, 'every fill comes from the style, so a theme can change it');
  assert.match(svg, /@media \(prefers-color-scheme:dark\)\{svg\.dshr-timeline\{[^}]*--bg:#16181d/);
  assert.match(svg, /\.open\{fill:var\(--dsw-alias-state-error-primary,var\(--open\)\)\}/, 'the host\'s token first, in the web');
  assert.match(renderReportHtml(r), /<meta name="color-scheme" content="light dark">[\s\S]*@media \(prefers-color-scheme:dark\)\{body\{/);
});

test('the timeline speaks the viewer\'s language: every word in both, no English left in Chinese', async () => {
  const { timelineSvg } = await import('../report-html.js');
  const { PICTURE_LANGUAGES, PICTURE_WORD_KEYS, pictureWords } = await import('../report-words.js');
  const en = pictureWords('en');
  for (const lang of PICTURE_LANGUAGES.filter((l) => l !== 'en')) {
    const w = pictureWords(lang);
    for (const k of PICTURE_WORD_KEYS) assert.notEqual(w(k), en(k), `${lang} words ${k} its own way`);
  }
  const withGiveUp = [...OUTAGE, { at: at(90), type: 'give-up', agent: 's2', channel: A, reason: 'recovery-timeout', code: 'SERVER', class: 'transient' }];
  const r = await report([withGiveUp], { fromMs: T0, toMs: T0 + 100_000 });
  const zh = timelineSvg(r, { locale: 'zh-CN' });
  assert.match(zh, /aria-label="各通道熔断状态时间线"/);
  // The words a reader sees or hovers: text and titles, less channel names, codes, reasons and times.
  const words = [...zh.matchAll(/<(text|title)[^>]*>([^<]*)</g)].map((m) => m[2])
    .join(' ').replace(/[\w.-]+\/[\w.*-]+/g, ' ').replace(/\b[A-Z][A-Z0-9_]+\b/g, ' ').replace(/recovery-timeout/g, ' ')
    .match(/[A-Za-z]{2,}/g) ?? [];
  assert.deepEqual(words, []);
  assert.match(timelineSvg(r, { locale: 'en' }), /class="legend">half-open \(probing\)</);
  assert.equal(timelineSvg(r), timelineSvg(r, { locale: 'fr' }), 'a language it does not speak: English');
  const { formatDuration } = await import('../report.js');
  const { pictureDuration } = await import('../report-words.js');
  for (const ms of [12, 4200, 42_000, 61_000, 3 * 3600_000 + 5 * 60_000, NaN]) assert.equal(pictureDuration('en', ms), formatDuration(ms));
});

test('an open breaker adopted from the health file starts an outage the log never saw open', async () => {
  const restore = { at: at(5), type: 'input', export: 'restore', nowMs: T0 + 5000,
    health: { channels: [{ channel: A, state: 'open', failures: 3, opens: 1, openUntilMs: T0 + 60_000, lastCode: 'SERVER' },
      { channel: B, state: 'closed', failures: 1 }] } };
  const r = await report([[restore, circuit(60, 'half-open', A, 'cooled-down'), circuit(61, 'closed', A, 'recovered')]], { fromMs: T0, toMs: T0 + 100_000 });
  assert.deepEqual(r.incidents.map((i) => [i.channel, i.start, i.end, i.cause]), [['p/a', T0 + 5000, T0 + 61_000, 'SERVER']]);
});

test('the command and the web endpoint read both generations over the window', async (t) => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { reportCommand, reportData } = await import('../report-command.js');
  const { WebHalf } = await import('../web.js');
  const dir = await mkdtemp(join(tmpdir(), 'dshr-report-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.jsonl');
  const lines = (rs) => rs.map((r) => JSON.stringify(r)).join('\n') + '\n';
  // The rotated generation holds the opening; the live file the close and a torn last line.
  await writeFile(`${path}.1`, lines(OUTAGE.slice(0, 12)));
  await writeFile(path, lines(OUTAGE.slice(12)) + '{"at":"2026-12-01T00:02');
  const now = T0 + 3600_000;

  const day = await reportCommand(path, undefined, now);
  assert.equal(day.kind, 'success');
  assert.match(day.text, /#1 p\/a {2}2026-12-01 00:00:10 → 00:01:11/);
  assert.match(day.text, /1 record skipped: unreadable or malformed$/, 'the torn last line');
  // A window that ends before the outage: nothing to show.
  assert.match((await reportCommand(path, '1h', T0 + 5000)).text, /none: no breaker opened/);
  assert.deepEqual(await reportCommand(path, 'often', now), { kind: 'error', text: '"often" is not a window: use /resilience report [24h|7d] (or <n>h, <n>d)' });

  const web = new WebHalf({ auditPath: path });
  const answer = await web.handler(() => undefined)('report', { window: '7d' });
  assert.equal(answer.ok, true);
  const direct = await reportData(path, '7d', now);
  assert.deepEqual(answer.value.report.incidents.map((i) => i.failedRequests), direct.report.incidents.map((i) => i.failedRequests));
  assert.match(answer.value.svg, /^<svg [^>]*class="dshr-timeline"/);
  assert.equal(JSON.stringify(JSON.parse(JSON.stringify(answer.value))), JSON.stringify(answer.value), 'plain JSON for the RPC');
  const bad = await web.handler(() => undefined)('report', { window: 'x' });
  assert.equal(bad.ok, false);
  const zh = await web.handler(() => undefined)('report', { window: '7d', locale: 'zh-CN' });
  assert.match(zh.value.svg, /class="legend">熔断</);
  const long = await web.handler(() => undefined)('report', { window: '7d', locale: 'x'.repeat(5000) });
  assert.equal(long.ok, false);
  assert.ok(JSON.stringify(long).length < 400, 'the refusal does not echo the input');
});

test('a breaker one host adopted ends when another host closes it', async () => {
  const restore = (s, ch) => ({ at: at(s), type: 'input', export: 'restore', nowMs: T0 + s * 1000,
    health: { channels: [{ channel: ch, state: 'open', failures: 3, openUntilMs: T0 + 60_000, lastCode: 'SERVER' }] } });
  const hostA = [circuit(10, 'open', A, 'SERVER'), circuit(70, 'half-open', A, 'cooled-down'), circuit(71, 'closed', A, 'recovered')];
  const hostB = [restore(20, A)]; // B learnt of it from the shared store and was told of the close the same way
  const r = await report([hostA, hostB], { fromMs: T0, toMs: T0 + 100_000 });
  assert.deepEqual(r.incidents.map((i) => [i.start, i.end, i.seenOpening]), [[T0 + 10_000, T0 + 71_000, true]]);
  const alone = await report([hostB], { fromMs: T0, toMs: T0 + 100_000 });
  assert.deepEqual(alone.incidents.map((i) => [i.start, i.ongoing, i.seenOpening]), [[T0 + 20_000, true, false]]);
  assert.match(renderReportText(alone), /cause SERVER \(\?\) \(opened earlier than this log shows\)/);
});

test('a stalled channel: the stock host would have waited out the idle timeout on every attempt', async () => {
  const log = [
    request(0, 's'), open(0, A),
    { at: at(180), type: 'stall', route: A, purpose: undefined, bound: 'first-chunk', silenceMs: 180_000, limitMs: 180_000, chunks: 0 },
    error(180, 's', 'TIMEOUT'), circuit(180, 'open', A, 'stall'), failover(180, 's'), ...okB(180, 's'), settled(181, 's'),
    circuit(900, 'half-open', A, 'cooled-down'), circuit(901, 'closed', A, 'recovered'),
  ];
  const [inc] = (await report([log])).incidents;
  assert.deepEqual([inc.cause, inc.stock.code, inc.stock.budgetMs, inc.lostMs, inc.stock.turnsFailed], ['stall', 'TIMEOUT', 15_500 + 6 * 300_000, 180_000, 0]);
  assert.match(renderReportText(await report([log])), /stock host: 5 retries over ~30 min 16 s, each attempt hangs for the 300 s idle timeout, then the turn fails with TIMEOUT: 0 of 1 turns/);
});
