// The hedge race in the stream wrapper (policy/hedge.go decides, stall.js
// races): against the real policy module on a mocked clock, with a fake
// adapter whose calls honour their signal. Only one call's chunks ever reach
// the caller; the other's connection is closed at once.
import { afterEach, before, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { StallWatcher } from '../stall.js';
import { advance, FakeCall } from './fake-call.mjs';

const PRIMARY = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const SECONDARY = { provider: 'mock', model: 'mock-b' };
const quiet = { info() {}, warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

/** A watcher on the real module (chain [primary, secondary]), the session's request routed first. */
function rig(row = {}) {
  const policy = new Policy(compiled, { chain: [PRIMARY, SECONDARY], stall: { firstChunkMs: 10_000, idleMs: 10_000 }, ...row }, quiet);
  const audit = [];
  const events = [];
  const env = {
    ctx: { emit: (name, payload) => events.push([name, payload]) },
    audit: { write: (r) => audit.push(r) },
    logger: quiet,
    healthChanged() {}, scheduleWake() {}, probe() {},
  };
  const decide = (event) => {
    const out = policy.decide(Date.now(), event);
    if (out) carryOut(out.effects, env);
    return out?.verdict;
  };
  decide({ kind: 'request', agent: 's1', proposed: PRIMARY });
  const calls = [];
  const watcher = new StallWatcher({
    decide,
    llm: () => ({ stream: (copy) => { const c = new FakeCall(copy); calls.push(c); return c; } }),
    wall: () => Date.now(),
    mono: () => Date.now(),
    timers: { set: (fn, ms) => setTimeout(fn, ms), clear: (t) => clearTimeout(t) },
  });
  return { watcher, audit, events, calls };
}

function consume(stream) {
  const got = [];
  const done = (async () => { for await (const chunk of stream) got.push(chunk); })();
  return { got, done };
}

const request = (over = {}) => Object.freeze({ ...PRIMARY, messages: Object.freeze([]), sessionId: 's1', reasoningEffort: 'high', signal: new AbortController().signal, ...over });
const text = (t) => ({ type: 'text-delta', index: 0, text: t });
const stop = { type: 'finish', reason: { kind: 'stop' } };
const notCalled = () => { throw new Error('next() must not be called for a watched call'); };
const hedges = (audit) => audit.filter((r) => r.type === 'hedge');

test('the hedge streams first: its chunks alone reach the caller, the primary is closed at once, the race audited and emitted', async () => {
  const { watcher, audit, events, calls } = rig({ hedge: { afterMs: 2000 } });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(1999);
  assert.equal(calls.length, 1, 'no hedge before its delay');
  await advance(1);
  assert.equal(calls.length, 2, 'the hedge is sent at the delay');
  const [primary, hedge] = calls;
  assert.deepEqual([hedge.options.provider, hedge.options.model], [SECONDARY.provider, SECONDARY.model]);
  assert.equal(hedge.options.reasoningEffort, undefined, 'an effort the target does not list is dropped');
  assert.ok(Object.isFrozen(hedge.options));
  assert.equal(watcher.wrap(hedge.options, () => 'passed'), 'passed', 'the hedge passes the waterfall untouched');
  await advance(500);
  hedge.push(text('from the hedge'));
  await advance(0);
  assert.equal(primary.closed, true, "the primary's connection closed as the hedge streamed");
  primary.push(text('late primary')); // nothing of it may reach the caller
  hedge.push(text(' again'), stop);
  await done;
  assert.deepEqual(got, [text('from the hedge'), text(' again'), stop]);
  assert.equal(hedge.closed, false);
  const [h] = hedges(audit);
  assert.deepEqual({ ...h }, { type: 'hedge', agent: 's1', from: PRIMARY, to: SECONDARY, afterMs: 2000, reason: 'hedge.afterMs',
    winner: 'hedge', firstTokenMs: 2500, loserWaitMs: 2500 }); // the module's record: absent keys are absent
  assert.deepEqual(events.filter(([n]) => n === 'dsh-resilience/hedge').length, 1);
});

test('the primary streams first after the hedge was sent: the hedge is closed, the primary goes on', async () => {
  const { watcher, audit, calls } = rig({ hedge: { afterMs: 2000 } });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(2000);
  const [primary, hedge] = calls;
  await advance(300);
  primary.push(text('primary'));
  await advance(0);
  assert.equal(hedge.closed, true);
  assert.equal(hedge.released, true);
  hedge.push(text('late hedge'));
  primary.push(stop);
  await done;
  assert.deepEqual(got, [text('primary'), stop]);
  assert.deepEqual(hedges(audit).map((r) => [r.winner, r.firstTokenMs, r.loserWaitMs]), [['primary', 2300, 300]]);
});

test('without hedge: one call, never a second', async () => {
  const { watcher, audit, calls } = rig();
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(9000);
  assert.equal(calls.length, 1);
  calls[0].push(text('primary'), stop);
  await done;
  assert.deepEqual(got, [text('primary'), stop]);
  assert.equal(hedges(audit).length, 0);
});

test('neither streams: the stall watchdog cuts the request, both connections closed, the race audited as cut', async () => {
  const { watcher, audit, calls } = rig({ hedge: { afterMs: 2000 } });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(2000);
  assert.equal(calls.length, 2);
  await advance(8000);
  await done;
  assert.equal(got.length, 1);
  assert.equal(got[0].reason.failure.code, 'TIMEOUT');
  assert.deepEqual(calls.map((c) => c.closed), [true, true]);
  assert.deepEqual(hedges(audit).map((r) => [r.winner, r.end]), [['none', 'cut']]);
});

test('the hedge fails before the primary streams: the primary goes on alone, and is not hedged again', async () => {
  const { watcher, audit, calls } = rig({ hedge: { afterMs: 2000 } });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(2000);
  calls[1].push({ type: 'finish', reason: { kind: 'error', failure: { code: 'SERVER', message: '500' } } });
  await advance(3000);
  assert.equal(calls.length, 2, 'one hedge per call');
  calls[0].push(text('primary'), stop);
  await done;
  assert.deepEqual(got, [text('primary'), stop]);
  assert.deepEqual(hedges(audit).map((r) => [r.winner, r.end, r.code]), [['none', 'hedge-failed', 'SERVER']]);
});

test('the primary fails while the hedge is out: its failure reaches the caller as without a hedge, the hedge is closed', async () => {
  const { watcher, audit, calls } = rig({ hedge: { afterMs: 2000 } });
  const { got, done } = consume(watcher.wrap(request(), notCalled));
  await advance(2000);
  const failure = { type: 'finish', reason: { kind: 'error', failure: { code: 'RATE_LIMIT', message: '429' } } };
  calls[0].push(failure);
  await done;
  assert.deepEqual(got, [failure]);
  assert.equal(calls[1].closed, true);
  assert.deepEqual(hedges(audit).map((r) => [r.winner, r.end]), [['none', 'primary-ended']]);
});

test("the caller's abort during the race closes both and ends it as cancelled", async () => {
  const { watcher, audit, calls } = rig({ hedge: { afterMs: 2000 } });
  const caller = new AbortController();
  const { got, done } = consume(watcher.wrap(request({ signal: caller.signal }), notCalled));
  await advance(2000);
  caller.abort();
  await advance(0);
  await done;
  assert.deepEqual(calls.map((c) => c.closed), [true, true]);
  assert.equal(got.at(-1).reason.kind, 'aborted');
  assert.deepEqual(hedges(audit).map((r) => [r.winner, r.end]), [['none', 'cancelled']]);
});

test('a compaction call is never hedged', async () => {
  const { watcher, calls } = rig({ hedge: { afterMs: 2000 } });
  const { done } = consume(watcher.wrap(request({ purpose: 'compaction' }), notCalled));
  await advance(5000);
  assert.equal(calls.length, 1);
  calls[0].push(stop);
  await done;
});
