// Row text from session events (rows.cjs): the events are shaped as the real
// host logs them (request/header, error finish chunks, turn/end).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { failureState, routeState, turnEndState, rowView, whereOf } = require('../rows.cjs');

const header = (seq, provider, model, reason, time = 1000 + seq) => ({ type: 'request/header', seq, time, data: { header: { config: { provider, model } }, reason } });
const failure = (seq, code, status, time = 1000 + seq) => ({ type: 'assistant/chunk', seq, time, data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'error', failure: { code, status, message: 'x' } } } } });
const stepLoc = { kind: 'step', turn: { turn: 1 }, step: { step: 1 } };

/** Runs a sequence through the three state functions as the definitions do. */
function replay(events) {
  let route; let fail; const rows = [];
  for (const e of events) {
    if (e.type === 'assistant/chunk') fail = failureState(e, fail, route) ?? fail;
    if (e.type === 'request/header') { route = routeState(e, whereOf(stepLoc), route, fail); if (route.kind) rows.push(route); }
    if (e.type === 'turn/end') { const s = turnEndState(e, fail, route); if (s) rows.push({ kind: 'give-up', ...s }); }
  }
  return rows;
}

const FLASH = ['deepseek-official', 'deepseek-v4-flash'];
const seqOf429x3 = [header(10, ...FLASH, 'initial'), failure(12, 'RATE_LIMIT', 429), failure(15, 'RATE_LIMIT', 429), failure(18, 'RATE_LIMIT', 429), header(19, 'backup', 'secondary', 'change')];

test('three 429s then a route change: one failover row, counted', () => {
  const rows = replay(seqOf429x3);
  assert.equal(rows.length, 1);
  const v = rowView('failover', rows[0], [], 'en');
  assert.equal(v.text, 'deepseek-official/deepseek-v4-flash failed (RATE_LIMIT ×3) → backup/secondary');
  assert.deepEqual(v.details.find(([k]) => k === 'Attempts'), ['Attempts', '3']);
});

test('a user model switch (no failure before it) makes no row', () => {
  const rows = replay([header(10, ...FLASH, 'initial'), { type: 'assistant/chunk', seq: 11, time: 1, data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } } }, header(20, 'deepseek-official', 'deepseek-v4-pro', 'change')]);
  assert.deepEqual(rows, []);
});

test('a single quota failure: no ×, and details from the audit record', () => {
  const rows = replay([header(10, ...FLASH, 'initial'), failure(12, 'QUOTA', 402, 5000), header(13, 'backup', 'secondary', 'change', 5010)]);
  const at = (ms) => new Date(ms).toISOString();
  const records = [
    { at: at(5001), type: 'circuit-open', channel: 'deepseek-official/deepseek-v4-flash', openUntil: '2026-12-01T03:00:00.000Z' },
    { at: at(5002), type: 'failover', from: 'deepseek-official/deepseek-v4-flash', to: 'backup/secondary', code: 'QUOTA', class: 'quota' },
  ];
  const v = rowView('failover', rows[0], records, 'en');
  assert.equal(v.text, 'deepseek-official/deepseek-v4-flash failed (QUOTA) → backup/secondary');
  assert.deepEqual(v.details.map(([k]) => k), ['Code', 'Class', 'Breaker open until', 'Attempts']);
  assert.equal(v.details[0][1], 'QUOTA (402)');
  assert.equal(v.details[1][1], 'quota');
});

test('history loaded mid-session (no earlier header): the row still names the target', () => {
  let fail = failureState(failure(50, 'SERVER', 500), undefined, undefined);
  const s = routeState(header(51, 'mock', 'mock-b', 'change'), '1:1', undefined, fail);
  assert.equal(s.kind, 'failover');
  assert.equal(rowView('failover', s, [], 'en').text, '→ mock/mock-b (SERVER)');
  assert.equal(rowView('failover', s, [], 'zh').text, '→ mock/mock-b（SERVER）');
});

test('the return to the primary: a row only with the audit record', () => {
  const rows = replay([...seqOf429x3, { type: 'assistant/chunk', seq: 20, time: 1020, data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind: 'stop' } } } }, header(40, ...FLASH, 'change', 90000)]);
  assert.deepEqual(rows.map((r) => r.kind), ['failover', 'return']);
  assert.equal(rowView('return', rows[1], [], 'en'), null, 'a manual switch back is not a return');
  const rec = [{ at: new Date(90001).toISOString(), type: 'return', to: 'deepseek-official/deepseek-v4-flash', from: 'backup/secondary' }];
  assert.equal(rowView('return', rows[1], rec, 'en').text, 'Back on deepseek-official/deepseek-v4-flash');
  assert.equal(rowView('return', rows[1], rec, 'zh').text, '已回到 deepseek-official/deepseek-v4-flash');
});

test('a turn ending in an error is a give-up row only when the plugin recorded one', () => {
  const end = { type: 'turn/end', seq: 30, time: 7000, data: { turn: 1, reason: { kind: 'error', error: { code: 'QUOTA' } } } };
  const rows = replay([header(10, ...FLASH, 'initial'), failure(12, 'QUOTA', 402, 6990), end]);
  assert.equal(rows.length, 1);
  assert.equal(rowView('give-up', rows[0], [], 'en'), null);
  const rec = [{ at: new Date(6995).toISOString(), type: 'give-up', channel: 'deepseek-official/deepseek-v4-flash', reason: 'no-routable-fallback', code: 'QUOTA' }];
  const v = rowView('give-up', rows[0], rec, 'en');
  assert.equal(v.kind, 'give-up');
  assert.equal(v.text, 'Gave up on deepseek-official/deepseek-v4-flash: no channel to fail over to (QUOTA)');
  const completed = { ...end, data: { turn: 1, reason: { kind: 'completed' } } };
  assert.equal(turnEndState(completed, undefined, undefined), undefined);
});

test('events that are not ours, or malformed, give nothing and never throw', () => {
  for (const e of [undefined, null, {}, { type: 'request/header' }, { type: 'request/header', data: {} }, { type: 'assistant/chunk', data: { chunk: null } }, { type: 'turn/end', data: null }]) {
    assert.equal(failureState(e, undefined, undefined), undefined);
    assert.equal(routeState(e, undefined, undefined, undefined), undefined);
    assert.equal(turnEndState(e, undefined, undefined), undefined);
  }
  assert.equal(rowView('failover', undefined, [], 'en'), null);
});

test('a give-up lists what was tried when its record carries it', () => {
  const { rowView, triedList } = require('../rows.cjs');
  const state = { seq: 9, time: Date.parse('2026-12-01T12:00:05Z'), code: 'QUOTA', turn: 1, route: 'p/a' };
  const base = { type: 'give-up', at: '2026-12-01T12:00:04Z', channel: { provider: 'p', model: 'b' }, reason: 'recovery-timeout', code: 'QUOTA' };
  const without = rowView('give-up', state, [base], 'en');
  assert.equal(without.text, 'Gave up on p/b: recovery took too long (QUOTA)');
  assert.equal(without.details.length, 2);
  const withTried = rowView('give-up', state, [{ ...base, tried: [{ channel: 'p/a', code: 'QUOTA', count: 2 }, { channel: { provider: 'p', model: 'b' }, code: 'QUOTA' }, 'p/c', 7] }], 'zh');
  assert.deepEqual(withTried.details[2], ['已尝试', ['p/a（QUOTA ×2）', 'p/b（QUOTA）', 'p/c']]);
  assert.deepEqual(triedList(undefined, 'en'), []);
});

test('a give-up after a failover says which channels were tried (issue #17)', () => {
  const state = { seq: 9, time: 7000, code: 'RATE_LIMIT', turn: 1, route: 'deepseek/flash' };
  const rec = [{ at: new Date(6995).toISOString(), type: 'give-up', channel: 'tokenplan/secondary', reason: 'recovery-timeout', code: 'RATE_LIMIT',
    tried: [{ channel: 'deepseek/flash', code: 'RATE_LIMIT' }, { channel: 'tokenplan/secondary', code: 'RATE_LIMIT' }] }];
  const v = rowView('give-up', state, rec, 'en');
  assert.equal(v.text, 'Gave up on tokenplan/secondary: recovery took too long (RATE_LIMIT); tried deepseek/flash (RATE_LIMIT), tokenplan/secondary (RATE_LIMIT)');
  assert.deepEqual(v.details.at(-1), ['Tried', ['deepseek/flash (RATE_LIMIT)', 'tokenplan/secondary (RATE_LIMIT)']]);
});

test('failover and give-up details say where: "failover 2/4 · turn 3 step 1"', () => {
  const { progressText } = require('../rows.cjs');
  const { translate } = require('../i18n.cjs');
  const en = (k, v) => translate('en', k, v);
  assert.equal(progressText({ failovers: 2, maxFailovers: 4, turn: 3, step: 1 }, en), 'failover 2/4 · turn 3 step 1');
  assert.equal(progressText({ turn: 3 }, en), 'turn 3');
  assert.equal(progressText({ failovers: 1 }, en), 'failover 1/?');
  assert.equal(progressText({}, en), '');
  assert.equal(progressText({ failovers: 2, maxFailovers: 4, turn: 3, step: 1 }, (k, v) => translate('zh', k, v)), '第 2/4 次切换 · 第 3 轮第 1 步');
  const rows = replay([header(10, ...FLASH, 'initial'), failure(12, 'QUOTA', 402, 5000), header(13, 'backup', 'secondary', 'change', 5010)]);
  const records = [{ at: new Date(5002).toISOString(), type: 'failover', from: 'deepseek-official/deepseek-v4-flash', to: 'backup/secondary',
    code: 'QUOTA', class: 'quota', failovers: 2, maxFailovers: 4, turn: 3, step: 1 }];
  const v = rowView('failover', rows[0], records, 'en');
  assert.deepEqual(v.details.at(-1), ['Where', 'failover 2/4 · turn 3 step 1']);
});

// Hedge rows (issue #36): the host logs nothing of a hedge, so the row stands
// at every request's header, up to its finish chunk, and shows only when the
// audit holds a `hedge` record from that request's channel within it.
const finish = (seq, time, kind = 'stop') => ({ type: 'assistant/chunk', seq, time, data: { turn: 1, step: 1, chunk: { type: 'finish', reason: { kind } } } });

/** The hedge candidates of a sequence, as the definitions build them. */
function hedges(events) {
  const { hedgeState } = require('../rows.cjs');
  let route; let fail; const out = [];
  for (const e of events) {
    if (e.type === 'assistant/chunk') fail = failureState(e, fail, route) ?? fail;
    if (e.type === 'request/header') route = routeState(e, whereOf(stepLoc), route, fail);
    const h = hedgeState(e, route);
    if (h) out.push(h);
  }
  return out;
}

const hedgeRecord = (at, more = {}) => ({ at: new Date(at).toISOString(), type: 'hedge', agent: 's', from: 'deepseek-official/deepseek-v4-flash', to: 'mock/mock-b',
  afterMs: 2000, reason: 'hedge.afterMs', winner: 'hedge', firstTokenMs: 2650, loserWaitMs: 2650, ...more });

test('a hedge the hedge won: who won, time saved, what the loser cost, both channels, in both languages', () => {
  const [h] = hedges([header(10, ...FLASH, 'initial', 10_000), finish(16, 13_000)]);
  assert.deepEqual(h, { seq: 10, time: 10_000, end: 13_000, route: 'deepseek-official/deepseek-v4-flash' });
  assert.equal(rowView('hedge', h, [], 'en'), null, 'no record: no row (most requests are not hedged)');
  const rec = [hedgeRecord(12_650, { savedMs: 17350 })];
  const v = rowView('hedge', h, rec, 'en');
  assert.equal(v.kind, 'hedge');
  assert.equal(v.text, 'deepseek-official/deepseek-v4-flash silent for 2.0 s: hedged to mock/mock-b, which answered first (17.4 s saved)');
  assert.deepEqual(v.details, [
    ['Winner', 'the hedge, mock/mock-b'],
    ['First token', '2.6 s'],
    ['Time saved', '17.4 s'],
    ['Aborted call', 'deepseek-official/deepseek-v4-flash, after 2.6 s with no answer'],
    ['Sent after', '2.0 s (hedge.afterMs)'],
  ]);
  const zh = rowView('hedge', h, rec, 'zh');
  assert.equal(zh.text, 'deepseek-official/deepseek-v4-flash 2.0 秒无响应：已对冲到 mock/mock-b，由它先响应（节省 17.4 秒）');
  assert.deepEqual(zh.details.map(([k]) => k), ['胜出', '首字', '节省时间', '已中止的请求', '发出时机']);
  assert.equal(zh.details[3][1], 'deepseek-official/deepseek-v4-flash，等待 2.6 秒 无响应');
});

test('a hedge with no median yet says the saving is not known; the primary winning names the hedge as the loser', () => {
  const [h] = hedges([header(10, ...FLASH, 'initial', 10_000), finish(16, 13_000)]);
  const won = rowView('hedge', h, [hedgeRecord(12_650)], 'en');
  assert.equal(won.text, 'deepseek-official/deepseek-v4-flash silent for 2.0 s: hedged to mock/mock-b, which answered first');
  assert.deepEqual(won.details[2], ['Time saved', 'not known yet (no first token of the first channel measured)']);
  const primary = rowView('hedge', h, [hedgeRecord(12_400, { winner: 'primary', firstTokenMs: 2400, loserWaitMs: 400,
    reason: 'p90 of the last 12 first tokens' })], 'en');
  assert.equal(primary.text, 'deepseek-official/deepseek-v4-flash silent for 2.0 s: hedged to mock/mock-b; deepseek-official/deepseek-v4-flash answered first');
  assert.deepEqual(primary.details, [
    ['Winner', 'the first call, deepseek-official/deepseek-v4-flash'],
    ['First token', '2.4 s'],
    ['Aborted call', 'mock/mock-b, after 0.4 s with no answer'],
    ['Sent after', '2.0 s (p90 of the last 12 first tokens)'],
  ]);
  assert.equal(rowView('hedge', h, [hedgeRecord(12_400, { winner: 'primary', reason: 'hedge.maxMs: 3 of 8 first tokens measured' })], 'zh').details.at(-1)[1],
    '2.0 秒（hedge.maxMs：已测得 3/8 次首字）');
  const none = rowView('hedge', h, [hedgeRecord(12_900, { winner: 'none', end: 'hedge-failed', code: 'SERVER', firstTokenMs: undefined, loserWaitMs: 900 })], 'en');
  assert.equal(none.text, 'deepseek-official/deepseek-v4-flash silent for 2.0 s: hedged to mock/mock-b; the hedge failed, the first call went on alone');
  assert.deepEqual(none.details.map(([k]) => k), ['Winner', 'Aborted call', 'Sent after', 'Code']);
});

test('a hedge record matches only its own request: its channel, between its header and its finish', () => {
  const [a, b] = hedges([header(10, ...FLASH, 'initial', 10_000), finish(16, 13_000), header(20, ...FLASH, 'initial', 60_000), finish(26, 61_000)]);
  const rec = [hedgeRecord(12_650)];
  assert.ok(rowView('hedge', a, rec, 'en'));
  assert.equal(rowView('hedge', b, rec, 'en'), null, 'the next request of the session');
  // The next request sent within a second of the hedge's record is not its.
  const [c, d] = hedges([header(10, ...FLASH, 'initial', 10_000), finish(16, 12_700), header(20, ...FLASH, 'initial', 13_200), finish(26, 13_400)]);
  assert.ok(rowView('hedge', c, rec, 'en'));
  assert.equal(rowView('hedge', d, rec, 'en'), null, 'a next request sent 550 ms after the record');
  assert.equal(rowView('hedge', a, [hedgeRecord(12_650, { from: 'mock/mock-b', to: 'deepseek-official/deepseek-v4-flash' })], 'en'), null, 'from another channel');
  assert.deepEqual(hedges([finish(16, 13_000)]), [], 'history loaded after the header: nothing to anchor to');
});

test('hostile model names in a hedge record stay text and never throw', () => {
  const [h] = hedges([header(10, 'p', '<img src=x onerror=alert(1)>', 'initial', 10_000), finish(16, 13_000)]);
  const evil = '<script>alert(1)</script>/‮{to}' + 'x'.repeat(230);
  const v = rowView('hedge', h, [hedgeRecord(12_000, { from: 'p/<img src=x onerror=alert(1)>', to: evil, afterMs: 'NaN', loserWaitMs: -5, savedMs: null })], 'en');
  assert.equal(v.text, `p/<img src=x onerror=alert(1)> silent for ?: hedged to ${evil}, which answered first`);
  assert.ok(!v.details.some(([k]) => k === 'Aborted call'), 'a negative wait is not shown');
  for (const r of [{}, { type: 'hedge' }, { type: 'hedge', at: 'garbage', from: h.route }, { type: 'hedge', at: new Date(12_000).toISOString(), from: h.route, winner: 42, to: { provider: 'a', model: 'b' } }]) {
    assert.doesNotThrow(() => rowView('hedge', h, [r], 'zh'));
  }
  assert.equal(rowView('hedge', h, [{ type: 'hedge', at: new Date(12_000).toISOString(), from: h.route, to: { provider: 'a', model: 'b' } }], 'en').text,
    'p/<img src=x onerror=alert(1)> silent for ?: hedged to a/b; ?');
});
