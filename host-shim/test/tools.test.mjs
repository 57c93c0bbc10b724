// Tool-call retry against the real policy module, on a mocked clock. A fake
// `tools/execute` waterfall stands in for the host's: like Cordis's, its
// `next` shifts listeners off a shared queue, so the first call runs the inner
// wrappers and the body, and every later call reaches the body directly.
import { afterEach, before, beforeEach, mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { carryOut, EVENTS } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { retryDeadlineResult, toolRetryListener, withNote } from '../tools.js';
import { toolResultEvent } from '../events.js';
import { Waits } from '../wait.js';

const quiet = { info() {}, warn() {} };
const TOOLS = { retry: ['web_fetch', 'db_*'], backoffMs: 1000, maxBackoffMs: 4000, maxAttempts: 3, retryDeadlineMs: 10_000 };
const SECRET = 'hunter2-argument-and-output';
let compiled;
let faultCompiled;
before(async () => {
  compiled = await compileModule();
  faultCompiled = await WebAssembly.compile(await readFile(new URL('../../build/dsh-resilience-fault.wasm', import.meta.url)));
});
beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 1_000_000 }));
afterEach(() => mock.timers.reset());

/** Moves the mocked clock and lets the promise chains it released run. */
async function advance(ms) {
  await settle(); // let whatever is running reach its next timer first
  mock.timers.tick(ms);
  await settle();
}
async function settle() {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}

const failed = (message, code) => ({
  isError: true,
  error: { message, ...(code ? { info: { name: 'HarnessError', code } } : {}) },
  content: [{ type: 'text', text: `Error: ${message}` }],
});
const ok = (value) => ({ isError: false, value, content: [{ type: 'text', text: JSON.stringify(value) }] });

/**
 * A plugin instance's worth of wiring around the real module: the listener,
 * the effects it carried out, the audit lines and the Cordis events.
 */
function setup({ tools = TOOLS, compiledModule = compiled, declaredTimeout, ready, isUp = () => true } = {}) {
  const audit = [];
  const events = [];
  const effects = [];
  const failures = [];
  const policy = new Policy(compiledModule, { tools }, quiet);
  const waits = new Waits();
  const env = {
    ctx: { emit: (name, payload) => events.push({ name, payload }) },
    audit: { write: (r) => audit.push(r) },
    logger: quiet,
  };
  const listener = toolRetryListener({
    decide(event) {
      if (!isUp()) return undefined; // as the shim's step before the module is up
      const out = policy.decide(Date.now(), event);
      if (out) {
        effects.push(...out.effects);
        carryOut(out.effects, env);
      }
      return out?.verdict;
    },
    waits,
    lifetime: waits.lifetime.signal,
    declaredTimeout,
    ready,
    fail: (e, what) => failures.push([what, e.message]),
    rand: () => 0, // the lowest draw: each wait is half its ceiling
  });
  return { listener, audit, events, effects, failures, waits, policy };
}

/**
 * One call through the fake waterfall. bodies[i] answers body call i (the
 * last repeats); each gets the exec and the signal it ran under.
 */
function call(listener, { name = 'web_fetch', bodies, inner, caller = new AbortController() }) {
  const exec = {
    callId: 'call_7', name, agent: { id: 'agent-1' }, arguments: { url: SECRET }, signal: caller.signal,
  };
  const seen = [];
  const base = async () => {
    const i = seen.length;
    seen.push(exec.signal);
    return bodies[Math.min(i, bodies.length - 1)](exec);
  };
  const queue = inner ? [inner] : [];
  const next = () => (queue.shift() ?? base)(exec, next);
  let settled = false;
  const promise = listener(exec, next).finally(() => { settled = true; });
  promise.catch(() => {}); // a test that expects a rejection asserts it later
  return { exec, seen, promise, caller, isSettled: () => settled };
}

test('two socket resets are repeated after a doubling backoff, and the success comes back as it is', async () => {
  const { listener, effects, audit, events } = setup();
  const success = ok({ body: SECRET });
  const c = call(listener, { bodies: [() => failed('read ECONNRESET'), () => failed('socket hang up'), () => success] });

  await settle();
  assert.equal(c.seen.length, 1);
  await advance(499);
  assert.equal(c.seen.length, 1, 'the first wait is 500 ms (half the 1000 ms ceiling at the lowest draw)');
  await advance(1);
  assert.equal(c.seen.length, 2);
  await advance(999);
  assert.equal(c.seen.length, 2, 'the second wait doubles');
  await advance(1);
  assert.equal(c.seen.length, 3);

  assert.equal(await c.promise, success, 'the very result object, unchanged');
  assert.deepEqual(effects.map((fx) => [fx.attempt, fx.outcome, fx.reason, fx.delayMs]),
    [[1, 'retry', 'socket', 500], [2, 'retry', 'socket', 1000], [3, 'succeeded', undefined, 0]]);
  assert.deepEqual(audit.map((r) => r.type), ['tool-retry', 'tool-retry', 'tool-recovered']);
  assert.ok(events.every((e) => e.name === EVENTS.toolRetry));
  assert.deepEqual(Object.keys(events[0].payload).sort(), ['agent', 'attempt', 'call', 'delayMs', 'kind', 'outcome', 'reason', 'tool']);
  const logged = JSON.stringify({ audit, events });
  assert.ok(!logged.includes(SECRET) && !logged.includes('ECONNRESET'), 'no argument values, no tool output, no messages');
});

test('a result before the module is up (a run started cold) waits for its bring-up and is decided: the reset is repeated', async () => {
  let up = false;
  let open = () => {};
  const bringUp = new Promise((resolve) => { open = () => { up = true; resolve(true); }; });
  const { listener, audit } = setup({ ready: () => (up ? undefined : bringUp), isUp: () => up });
  const success = ok({ body: 'found' });
  const c = call(listener, { bodies: [() => failed('read ECONNRESET'), () => success] });
  await settle();
  assert.equal(c.seen.length, 1);
  assert.equal(c.isSettled(), false, 'not handed back undecided');
  open();
  await advance(500);
  assert.equal(c.seen.length, 2, 'repeated once the module decided');
  assert.equal(await c.promise, success);
  assert.deepEqual(audit.map((r) => r.type), ['tool-retry', 'tool-recovered']);
});

test('a tool nobody declared is called once and its failure returned untouched', async () => {
  const { listener, effects, audit } = setup();
  const failure = failed('read ECONNRESET');
  const c = call(listener, { name: 'bash', bodies: [() => failure] });
  assert.equal(await c.promise, failure);
  assert.equal(c.seen.length, 1);
  assert.deepEqual([effects, audit], [[], []]);
});

test('a failure that would recur is returned at once: wrong arguments, permission, credits', async () => {
  for (const failure of [failed('invalid arguments: /url: required', 'INVALID_ARGS'), failed('EACCES: permission denied'), failed('积分不足')]) {
    const { listener } = setup();
    const c = call(listener, { bodies: [() => failure] });
    assert.equal(await c.promise, failure);
    assert.equal(c.seen.length, 1, failure.error.message);
  }
});

test('a declared tool that always fails is called exactly maxAttempts times; the note is one line on the real failure', async () => {
  const { listener, audit } = setup();
  const c = call(listener, { name: 'db_query', bodies: [() => failed('DeepSeek API error (HTTP 503)', 'WEB_PROVIDER_ERROR')] });
  await advance(500);
  await advance(1000);
  const result = await c.promise;
  assert.equal(c.seen.length, 3);
  assert.equal(result.isError, true);
  assert.deepEqual(result.error, { message: 'DeepSeek API error (HTTP 503)', info: { name: 'HarnessError', code: 'WEB_PROVIDER_ERROR' } });
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].text,
    'Error: DeepSeek API error (HTTP 503)\n[dsh-resilience] failed after 3 attempts (last failure: server); not retried further.');
  assert.deepEqual(audit.map((r) => [r.type, r.attempt, r.reason]), [['tool-retry', 1, 'server'], ['tool-retry', 2, 'server'], ['tool-exhausted', 3, 'server']]);
});

test('a cancel during the backoff returns the failure in hand at once and starts no further attempt', async () => {
  const { listener } = setup({ tools: { ...TOOLS, backoffMs: 60_000, maxBackoffMs: 60_000 } });
  const failure = failed('socket hang up');
  const c = call(listener, { bodies: [() => failure, () => ok(1)] });
  await advance(1000);
  assert.equal(c.isSettled(), false, 'waiting out the backoff');
  c.caller.abort();
  await settle();
  assert.equal(c.isSettled(), true, 'the cancel ends the wait without the clock moving');
  assert.equal(await c.promise, failure);
  await advance(120_000);
  assert.equal(c.seen.length, 1);
});

test('disposing the plugin during the backoff returns the failure in hand', async () => {
  const { listener, waits } = setup({ tools: { ...TOOLS, backoffMs: 60_000, maxBackoffMs: 60_000 } });
  const failure = failed('socket hang up');
  const c = call(listener, { bodies: [() => failure, () => ok(1)] });
  await settle();
  waits.dispose();
  assert.equal(await c.promise, failure);
  assert.equal(c.seen.length, 1);
});

/** A body that runs until its signal aborts, then fails the way a cooperative tool does. */
const hangs = (exec) => new Promise((resolve) => {
  exec.signal.addEventListener('abort', () => resolve(failed('This operation was aborted')), { once: true });
});

test('a repeat skips the inner wrappers, so it runs under a deadline of its own, and exec.signal is restored', async () => {
  const { listener, audit } = setup({ tools: { ...TOOLS, retryDeadlineMs: 5000 } });
  let innerRuns = 0;
  const inner = (exec, next) => { innerRuns++; return next(); }; // the host's timeout policy, say
  const c = call(listener, { inner, bodies: [() => failed('fetch failed'), hangs] });
  const callerSignal = c.exec.signal;
  await advance(500); // the first wait; attempt 2 starts and hangs
  assert.equal(c.seen.length, 2);
  assert.equal(innerRuns, 1, 'the repeat reached the body directly');
  assert.notEqual(c.seen[1], callerSignal, 'the repeat runs under a fused signal');
  assert.equal(c.seen[1].aborted, false);
  await advance(4999);
  assert.equal(c.seen[1].aborted, false);
  await advance(1); // the deadline: the repeat ends as a timeout, itself worth one more attempt
  assert.equal(c.seen[1].aborted, true);
  assert.equal(c.exec.signal, callerSignal, 'restored after the repeat');
  await advance(1000); // the second wait; attempt 3 hangs too
  await advance(5000);
  const result = await c.promise;
  assert.equal(c.seen.length, 3);
  assert.equal(result.error.info.code, 'TOOL_TIMEOUT');
  assert.match(result.content.at(-1).text, /failed after 3 attempts \(last failure: timeout\)/);
  assert.deepEqual(audit.map((r) => r.reason), ['socket', 'timeout', 'timeout']);
  assert.equal(c.exec.signal, callerSignal);
});

test('the caller cancelling during a repeat aborts the repeat, and nothing follows it', async () => {
  const { listener } = setup();
  const c = call(listener, { bodies: [() => failed('fetch failed'), hangs] });
  await advance(500);
  assert.equal(c.seen.length, 2);
  c.caller.abort();
  await settle();
  assert.equal(c.seen[1].aborted, true, 'the fused signal follows the caller');
  const result = await c.promise;
  assert.equal(result.error.message, 'This operation was aborted', 'a cancel is not dressed up as a timeout');
  await advance(60_000);
  assert.equal(c.seen.length, 2);
});

test("a tool's own declared timeout shortens a repeat's deadline", async () => {
  const { listener } = setup({ declaredTimeout: (name) => (name === 'web_fetch' ? 300 : undefined) });
  const c = call(listener, { bodies: [() => failed('TOOL_TIMEOUT', 'TOOL_TIMEOUT'), hangs] });
  await advance(500);
  assert.equal(c.seen.length, 2);
  await advance(299);
  assert.equal(c.seen[1].aborted, false);
  await advance(1);
  assert.equal(c.seen[1].aborted, true, 'held to the tool\'s 300 ms, not the 10 s repeat deadline');
  c.caller.abort(); // end it here
  await c.promise;
});

test('a thrown next() propagates, and exec.signal is restored', async () => {
  const { listener } = setup();
  const c = call(listener, { bodies: [() => failed('fetch failed'), () => { throw new Error('wrapper broke'); }] });
  await advance(500);
  await assert.rejects(c.promise, /wrapper broke/);
  assert.equal(c.exec.signal, c.caller.signal);
});

test('a module that traps fails open: one call, the result as it is', async () => {
  const { listener } = setup({ compiledModule: faultCompiled });
  const failure = failed('read ECONNRESET');
  const c = call(listener, { bodies: [() => failure, () => ok(1)] });
  assert.equal(await c.promise, failure);
  assert.equal(c.seen.length, 1);
});

test('the policy event carries the failure, never the arguments or the output', () => {
  const exec = { callId: 'c1', name: 'web_fetch', agent: { id: 'a9' }, arguments: { q: SECRET } };
  assert.deepEqual(toolResultEvent(exec, ok({ page: SECRET }), 2, 7, 300),
    { kind: 'tool-result', call: 'c1', tool: 'web_fetch', attempt: 2, rand: 7, agent: 'a9', timeoutMs: 300 });
  assert.deepEqual(toolResultEvent({ callId: 'c2', name: 't' }, failed('x'.repeat(5000), 'TOOL_TIMEOUT'), 1, 0, undefined),
    { kind: 'tool-result', call: 'c2', tool: 't', attempt: 1, rand: 0, failure: { message: 'x'.repeat(2000), code: 'TOOL_TIMEOUT' } });
  // A failure with no error object still has its text.
  assert.equal(toolResultEvent(exec, { isError: true, content: [{ type: 'text', text: 'socket hang up' }] }, 1, 0).failure.message, 'socket hang up');
});

test('the note goes on the last text block, or in a block of its own', () => {
  const image = { isError: true, error: { message: 'm' }, content: [{ type: 'image', data: 'x' }] };
  assert.deepEqual(withNote(image, 'N').content, [{ type: 'image', data: 'x' }, { type: 'text', text: 'N' }]);
  assert.deepEqual(withNote(failed('m'), 'N').content, [{ type: 'text', text: 'Error: m\nN' }]);
  assert.deepEqual(retryDeadlineResult(5).error.info, { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' });
  // A tool effect's audit record is the module's: plugin/codec/audit_test.go.
});

test('a thrown socket reset is repeated like a returned one; a thrown last word is thrown again as it was', async () => {
  const { listener, effects } = setup();
  const reset = () => { throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }); };
  const success = ok({ body: 'fine' });
  const c = call(listener, { bodies: [reset, reset, () => success] });
  await advance(500);
  await advance(1000);
  assert.equal(await c.promise, success);
  assert.deepEqual(effects.map((fx) => [fx.attempt, fx.outcome, fx.reason]), [[1, 'retry', 'socket'], [2, 'retry', 'socket'], [3, 'succeeded', undefined]]);

  const { listener: again } = setup({ tools: { ...TOOLS, maxAttempts: 2 } });
  const boom = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
  const d = call(again, { bodies: [() => { throw boom; }] });
  await advance(500);
  await assert.rejects(d.promise, (e) => e === boom, 'the very error, when the attempts are spent');
  assert.equal(d.seen.length, 2);
});
