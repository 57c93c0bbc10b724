// The stall watchdog against the real policy module, on a mocked clock: a
// fake adapter whose streams honour their signal stands in for the provider,
// and records whether its connection was closed and its iterator released.
import { afterEach, before, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { StallWatcher } from '../stall.js';
import { advance, FakeCall } from './fake-call.mjs';
import { streamCheckEvent } from '../events.js';

const ROUTE = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const LIMITS = { firstChunkMs: 2000, idleMs: 1500 };
const quiet = { info() {}, warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());


/** A watcher on the real module, with the fake adapter, and everything it emitted. */
function rig(stall = LIMITS, extra = {}, row = {}) {
  const policy = new Policy(compiled, { chain: [ROUTE], stall, ...row }, quiet);
  const audit = [];
  const events = [];
  const env = {
    ctx: { emit: (name, payload) => events.push([name, payload]) },
    audit: { write: (r) => audit.push(r) },
    logger: quiet,
    healthChanged() {}, scheduleWake() {}, probe() {},
  };
  const calls = [];
  let asked = 0;
  const live = new Set(); // timers armed and neither fired nor cleared
  const timers = {
    set: (fn, ms) => { const t = setTimeout(() => { live.delete(t); fn(); }, ms); live.add(t); return t; },
    clear: (t) => { live.delete(t); clearTimeout(t); },
  };
  const watcher = new StallWatcher({
    decide: (event) => {
      asked++;
      const out = policy.decide(Date.now(), event);
      if (out) carryOut(out.effects, env);
      return out?.verdict;
    },
    llm: () => ({ stream: (copy) => { const c = new FakeCall(copy); calls.push(c); return c; } }),
    wall: () => Date.now(), // the clock its decide runs on (mocked here)
    mono: () => Date.now(),
    timers,
    ...extra,
  });
  return { watcher, audit, events, calls, asked: () => asked, live: () => live.size };
}

/** Reads a stream in the background, recording each chunk with the mocked time it came at. */
function consume(stream) {
  const got = [];
  const done = (async () => {
    for await (const chunk of stream) got.push([Date.now(), chunk]);
  })();
  return { got, done };
}

const request = (over = {}) => Object.freeze({ ...ROUTE, messages: Object.freeze([]), signal: new AbortController().signal, ...over });
const chunk = (text) => ({ type: 'text-delta', index: 0, text });
const notCalled = () => { throw new Error('next() must not be called for a watched call'); };

test('a call that never answers is cut at its first-chunk limit, with a TIMEOUT naming the silence, and its connection closed', async () => {
  const { watcher, audit, events, calls, live } = rig();
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(1999);
  assert.equal(got.length, 0, 'not before the limit');
  await advance(1);
  await done;
  assert.equal(got.length, 1);
  const [at, finish] = got[0];
  assert.equal(at, 1_002_000, 'cut exactly at the limit');
  assert.deepEqual(finish, { type: 'finish', reason: { kind: 'error', failure: { code: 'TIMEOUT',
    message: 'no output for 2.0 s since the request was sent (dsh-resilience stall.firstChunkMs is 2000)' } } });
  assert.equal(calls[0].closed, true, 'the provider call was aborted');
  assert.equal(calls[0].released, true, 'its iterator was released');
  assert.equal(live(), 0, 'no timer left');
  assert.deepEqual(audit, [{ type: 'stall', route: { provider: 'deepseek-official', model: 'deepseek-v4-flash' }, bound: 'first-chunk', silenceMs: 2000, limitMs: 2000, chunks: 0 }]);
  assert.deepEqual(events.map(([name, p]) => [name, p.bound, p.silenceMs]), [['dsh-resilience/stall', 'first-chunk', 2000]]);
  assert.equal(watcher.calls.size, 0);
});

test('the check at the first chunk carries its time: two slow first tokens make the channel slow (audited, emitted)', async () => {
  const { watcher, audit, events, calls } = rig(LIMITS, {}, { slow: { firstTokenMs: 1000, minCalls: 2 } });
  for (let i = 0; i < 2; i++) {
    const { done } = consume(watcher.wrap(request(), notCalled));
    await advance(1200); // under the 2 s first-chunk bound, over slow.firstTokenMs
    calls[i].push(chunk('late'));
    calls[i].end();
    await advance(0);
    await done;
  }
  const slow = audit.filter((r) => r.type === 'slow');
  assert.equal(slow.length, 1, JSON.stringify(audit));
  assert.deepEqual(slow[0].channel, ROUTE);
  assert.equal(slow[0].firstTokenMs, 1200);
  assert.equal(slow[0].calls, 2);
  assert.deepEqual(events.filter(([n]) => n === 'dsh-resilience/slow').map(([, p]) => [p.from, p.to]), [['closed', 'slow']]);
});

test('chunks pass through untouched and in order; silence after them is cut at the idle limit', async () => {
  const { watcher, audit, calls } = rig();
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(500);
  const sent = [{ type: 'block-start', index: 0, blockType: 'text' }, chunk('partial')];
  calls[0].push(...sent);
  await advance(0);
  assert.deepEqual(got.map(([, c]) => c), sent);
  assert.ok(got.every(([, c], i) => c === sent[i]), 'the same objects, not copies');
  await advance(1499);
  assert.equal(got.length, 2, 'not before the idle limit');
  await advance(1);
  await done;
  assert.equal(got[2][0], 1_002_000, '1.5 s after the last chunk');
  assert.equal(got[2][1].reason.failure.message, 'no output for 1.5 s after 2 chunks (dsh-resilience stall.idleMs is 1500)');
  assert.equal(calls[0].closed, true);
  assert.equal(audit[0].bound, 'idle');
  assert.equal(audit[0].chunks, 2);
});

test('a slow but steady stream is never cut, however long it runs, and leaves no timer behind', async () => {
  const { watcher, audit, calls, asked, live } = rig();
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  for (let i = 0; i < 20; i++) { // a chunk a second for 20 s, against a 1.5 s idle limit
    await advance(1000);
    calls[0].push(chunk(`t${i}`));
    await advance(0); // the chunk flows before the clock moves on, as it would
  }
  await advance(1000);
  calls[0].push({ type: 'finish', reason: { kind: 'stop' } });
  calls[0].end();
  await advance(0);
  await done;
  assert.equal(got.length, 21, JSON.stringify(got));
  assert.equal(got.at(-1)[1].reason.kind, 'stop');
  assert.equal(calls[0].closed, false);
  assert.deepEqual(audit, []);
  assert.equal(live(), 0, 'no timer left once the call ended');
  const before = asked();
  await advance(3_600_000);
  assert.equal(asked(), before, 'no timer fired after the call ended');
  assert.ok(before <= 2 + 21, `a check per wake-up, not per chunk: ${before}`);
});

test("the caller's own abort during the silence is a cancel: the adapter's aborted finish passes, nothing is cut", async () => {
  const { watcher, audit, calls, asked, live } = rig();
  const caller = new AbortController();
  const { got, done } = consume(watcher.wrap(request({ signal: caller.signal }), notCalled));
  await advance(1000);
  const n = asked();
  caller.abort();
  assert.equal(live(), 0, 'the abort stopped the timer at once');
  await advance(0);
  await done;
  assert.deepEqual(got.map(([, c]) => c.reason.kind), ['aborted']);
  assert.equal(calls[0].closed, true, 'the caller\'s signal reaches the provider call');
  await advance(10_000);
  assert.deepEqual(audit, []);
  assert.equal(asked(), n, 'nothing asked after the abort');
});

test('a consumer holding a chunk longer than the idle limit is not the provider\'s silence', async () => {
  const { watcher, audit, calls } = rig();
  const it = watcher.wrap(request(), notCalled)[Symbol.asyncIterator]();
  const first = it.next();
  calls[0].push(chunk('a'));
  assert.equal((await first).value.text, 'a');
  await advance(5000); // the consumer is busy with 'a' for 5 s, three idle limits
  const second = it.next();
  await advance(1499);
  calls[0].push(chunk('b'));
  assert.equal((await second).value.text, 'b');
  assert.deepEqual(audit, []);
  await it.return();
  assert.equal(calls[0].released, true);
});

test('a consumer that stops early releases the provider call and every timer', async () => {
  const { watcher, calls, asked, live } = rig();
  const it = watcher.wrap(request(), notCalled)[Symbol.asyncIterator]();
  const first = it.next();
  await advance(0);
  calls[0].push(chunk('only'));
  assert.equal((await first).value.text, 'only');
  await it.return();
  assert.equal(calls[0].released, true);
  assert.equal(calls[0].closed, false, 'an early stop is the consumer\'s business, not a cut');
  assert.equal(live(), 0);
  const n = asked();
  await advance(60_000);
  assert.equal(asked(), n);
  assert.equal(watcher.calls.size, 0);
});

test('the copy: sent once, passed through when it comes round again, frozen like the original, cancellable by the caller, loop-marked', async () => {
  const marks = new WeakSet();
  const caller = new AbortController();
  const original = request({ signal: caller.signal });
  marks.add(original);
  const { watcher, calls } = rig(LIMITS, { carryMarks: (from, to) => { if (marks.has(from)) marks.add(to); } });
  const { done } = consume(watcher.wrap(original, notCalled));
  await advance(0);
  const copy = calls[0].options;
  assert.notEqual(copy, original);
  assert.ok(Object.isFrozen(copy));
  assert.ok(marks.has(copy));
  assert.equal(copy.messages, original.messages);
  const passed = Symbol('next');
  assert.equal(watcher.wrap(copy, () => passed), passed, 'the copy coming round the waterfall again goes straight through');
  assert.equal(calls.length, 1, 'sent once');
  assert.equal(copy.signal.aborted, false);
  caller.abort();
  assert.equal(copy.signal.aborted, true, "the caller's abort reaches the copy");
  await advance(0);
  await done;
});

test('no bound applies: the call is not touched at all', async () => {
  const { watcher, calls } = rig({ firstChunkMs: 0, idleMs: 0 });
  const stream = Symbol('downstream');
  assert.equal(watcher.wrap(request(), () => stream), stream);
  assert.equal(calls.length, 0);
});

test('purposes: a compaction call is bounded by its own limits', async () => {
  const { watcher, audit } = rig({ ...LIMITS, purposes: { compaction: { firstChunkMs: 10_000 } } });
  const { got, done } = consume(watcher.wrap(request({ purpose: 'compaction' }), notCalled));
  await advance(2000);
  assert.equal(got.length, 0, 'the loop\'s 2 s do not apply');
  await advance(8000);
  await done;
  assert.match(got[0][1].reason.failure.message, /^no output for 10 s .*stall\.purposes\.compaction\.firstChunkMs is 10000/);
  assert.equal(audit[0].purpose, 'compaction');
});

test('a module that fails never cuts: the call is left to the adapter', async () => {
  let fail = false;
  const { watcher, calls, audit } = rig(LIMITS);
  const decide = watcher.decide;
  watcher.decide = (ev) => {
    if (fail === 'throw') throw new Error('broken');
    return fail ? undefined : decide(ev);
  };
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  fail = true;
  await advance(60_000);
  assert.equal(got.length, 0);
  assert.deepEqual(audit, []);
  calls[0].push(chunk('late'));
  calls[0].end();
  await advance(0);
  await done;
  assert.equal(got[0][1].text, 'late');
  // And at the open: no verdict, no wrapping; a decide that throws is no verdict either.
  const passed = Symbol('next');
  assert.equal(watcher.wrap(request(), () => passed), passed);
  fail = 'throw';
  assert.equal(watcher.wrap(request(), () => passed), passed);
});

test('dispose stops every timer; calls in flight go on unwatched', async () => {
  const { watcher, calls, audit, live } = rig();
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(500);
  watcher.dispose();
  assert.equal(live(), 0);
  await advance(60_000);
  assert.deepEqual(audit, []);
  calls[0].push(chunk('x'));
  calls[0].end();
  await advance(0);
  await done;
  assert.equal(got.length, 1);
  const passed = Symbol('next');
  assert.equal(watcher.wrap(request(), () => passed), passed);
});

test('streamCheckEvent: monotonic times on the wall clock of the moment, purpose and cancel', () => {
  const caller = new AbortController();
  caller.abort();
  const ev = streamCheckEvent({ openedAt: 100, chunks: 3, lastChunkAt: 400.4 },
    { provider: 'p', model: 'm', purpose: 'session-title', signal: caller.signal }, 1_000_000, 1000);
  assert.deepEqual(ev, { kind: 'stream-check', channel: { provider: 'p', model: 'm' }, openedMs: 999_100, chunks: 3,
    cancelled: true, purpose: 'session-title', lastChunkMs: 999_400 });
  assert.deepEqual(streamCheckEvent({ openedAt: 5, chunks: 0 }, { provider: 'p', model: 'm' }, 10, 5),
    { kind: 'stream-check', channel: { provider: 'p', model: 'm' }, openedMs: 10, chunks: 0, cancelled: false });
});

test('a call opened before the module is up (a cold start) is watched once it is, its first-chunk bound counted from the opening', async () => {
  let up = false;
  let settle;
  const coming = new Promise((r) => { settle = r; });
  const base = rig();
  const { watcher, calls, audit } = rig(LIMITS, {
    decide: (event) => (up ? base.watcher.decide(event) : undefined),
    upLater: () => (up ? undefined : coming),
  });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  assert.equal(calls.length, 1, 'the call went out at once, wrapped');
  await advance(1500);
  up = true;
  settle();
  await advance(0);
  assert.equal(got.length, 0);
  await advance(499); // 1999 ms since the opening
  assert.equal(got.length, 0, 'not before the limit');
  await advance(1);
  await done;
  assert.equal(got[0][0], 1_002_000, 'cut at 2 s after the opening, not after the bring-up');
  assert.equal(got[0][1].reason.failure.code, 'TIMEOUT');
  assert.equal(calls[0].closed, true);
  assert.equal(audit.length + base.audit.length, 1, 'the cut audited once');
});

test('a call opened while the module is coming up and failing goes on unwatched', async () => {
  const { watcher, calls } = rig(LIMITS, { decide: () => undefined, upLater: () => Promise.resolve(false) });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(5000);
  assert.equal(calls[0].closed, false, 'never cut');
  calls[0].push(chunk('late'));
  calls[0].end();
  await advance(0);
  await done;
  assert.deepEqual(got.map(([, c]) => c), [chunk('late')]);
});

test('a cold call whose first chunk comes before the module is up stays watched: its silence after it is cut on the idle bound once the module is', async () => {
  let up = false;
  let settle;
  const coming = new Promise((r) => { settle = r; });
  const base = rig();
  const { watcher, calls } = rig(LIMITS, {
    decide: (event) => (up ? base.watcher.decide(event) : undefined),
    upLater: () => (up ? undefined : coming),
  });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  calls[0].push(chunk('a partial answer'));
  await advance(0);
  assert.equal(got.length, 1, 'the chunk passed at once');
  await advance(500);
  up = true;
  settle();
  await advance(0);
  assert.equal(calls[0].closed, false, 'watched, not cut yet');
  await advance(1500); // the idle bound from the chunk has passed
  await done;
  assert.equal(got[1][1].reason.failure.code, 'TIMEOUT', JSON.stringify(got));
  assert.equal(calls[0].closed, true);
});
