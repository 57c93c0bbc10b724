// The stall watchdog in the real host: a provider that accepts the call and
// then says nothing is cut after the configured silence, its connection
// closed, and the task answered by the secondary; a slow but steady stream is
// never cut; the user's own abort is a cancel. The adapter's own idle timeout
// is kept at 300 s, so it cannot be what cuts.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];
const LIMIT_MS = 2000; // both bounds, small so the test is quick
const ADAPTER_IDLE_MS = 300_000; // the stock default: what a stall costs without the plugin
const SLACK_MS = 1000; // timers, the event loop and a busy machine

const route = (c) => ({ provider: c.provider, model: c.model }); // audit records carry channels as objects

describe('stalled streams in the real host', () => {
  let fp;
  let poll;
  const closedAt = new Map(); // request record -> when the provider saw the client close it
  before(async () => {
    fp = await startFakeProvider({});
    // The fake provider records that a connection closed, not when: watch for it.
    poll = setInterval(() => {
      for (const r of fp.requests) if (r.closed && !closedAt.has(r)) closedAt.set(r, Date.now());
    }, 5);
  });
  after(async () => {
    clearInterval(poll);
    await fp.close();
  });

  const home = (t, plugin = {}) => makeHome({
    baseURL: fp.baseURL,
    plugin: { chain: CHAIN, stall: { firstChunkMs: LIMIT_MS, idleMs: LIMIT_MS }, ...plugin },
    streamIdleTimeoutMs: ADAPTER_IDLE_MS,
  }).then((h) => { t.after(h.cleanup); return h; });

  /** The facts every cut must show: when it fell, that it closed the call, what it said. */
  async function assertCuts(h, bound, r) {
    const primary = fp.requests.filter((q) => q.model === PRIMARY.model);
    assert.ok(primary.length >= 1, 'the primary was called');
    const stalls = (await auditRecords(h)).filter((a) => a.type === 'stall');
    assert.equal(stalls.length, primary.length, `one audited cut per primary attempt: ${JSON.stringify(stalls)}`);
    for (const s of stalls) {
      assert.deepEqual(s.route, route(PRIMARY));
      assert.equal(s.bound, bound);
      assert.equal(s.limitMs, LIMIT_MS);
      assert.ok(s.silenceMs >= LIMIT_MS && s.silenceMs < LIMIT_MS + SLACK_MS, `silence measured: ${s.silenceMs} ms`);
    }
    for (const q of primary) {
      assert.equal(q.closed, true, 'the primary connection was closed by the client');
      // The provider sees the request a little after the listener starts its clock
      // (connection, body, session flush), so it sees the close a little before the limit.
      const open = closedAt.get(q) - q.at;
      assert.ok(open > LIMIT_MS - SLACK_MS && open < LIMIT_MS + SLACK_MS, `connection closed ${open} ms after the provider got it`);
    }
    // The cut reached the host as a TIMEOUT naming the silence, through agent/request-error.
    const events = await sessionEvents(h);
    const retries = events.filter((e) => e.type === 'llm/retry');
    for (const e of retries) {
      assert.equal(e.data.failure?.code ?? e.data.code, 'TIMEOUT', JSON.stringify(e.data));
    }
    assert.equal(retries.length, primary.length - 1, 'the host retried each cut but the last (its budget)');
    assert.ok(r.ms < ADAPTER_IDLE_MS / 2, `answered in ${r.ms} ms, where one stock attempt alone takes ${ADAPTER_IDLE_MS} ms`);
    return { primary, stalls, events };
  }

  test('(a) the primary accepts and never answers: cut after the silence, closed, and the secondary answers', async (t) => {
    fp.reset();
    closedAt.clear();
    fp.script(PRIMARY.model, ['hang']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(t);

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    // Only the switch notice (host-shim/notice.js): no host error, no warning.
    assert.equal(cleanStderr(r.stderr), 'dsh-resilience: switched deepseek-official/deepseek-v4-flash → mock/mock-b (TIMEOUT; failover 1/4 · turn 1 step 1)');
    const { primary } = await assertCuts(h, 'first-chunk', r);
    assert.equal(primary.length, 1, 'stall.tripOnCut: the first cut opens the primary, no second silent attempt');
    const secondary = fp.requests.find((q) => q.model === SECONDARY.model);
    // The provider sees a request a little after the listener starts its clock, and the
    // secondary's at once after the cut: the gap may fall a few ms short of the limit.
    const gap = secondary.at - primary.at(-1).at;
    assert.ok(gap > LIMIT_MS - SLACK_MS, `the secondary was called only after the last cut (${gap} ms after the primary's request)`);
    const failover = (await auditRecords(h)).find((a) => a.type === 'failover');
    assert.equal(failover?.code, 'TIMEOUT');
    t.diagnostic(`(a) wall time to the answer: ${r.ms} ms from dsh's start, ${secondary.at - primary[0].at} ms from the ` +
      `primary's first request to the secondary's; primary attempts: ${primary.length}; ` +
      `primary connections open ${primary.map((q) => closedAt.get(q) - q.at).join('/')} ms`);
  });

  test('(a2) stall.tripOnCut false: the host retries the silent primary within its budget, then the plugin fails over', async (t) => {
    fp.reset();
    closedAt.clear();
    fp.script(PRIMARY.model, ['hang']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(t, { stall: { firstChunkMs: LIMIT_MS, idleMs: LIMIT_MS, tripOnCut: false } });

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    const { primary } = await assertCuts(h, 'first-chunk', r);
    // The harness's primary retryPolicy retries twice: each cut is counted, the third trips.
    assert.equal(primary.length, 3, 'three silent attempts, each cut');
  });

  test('(b) headers and one chunk, then silence: cut on the idle bound, closed, and the secondary answers', async (t) => {
    fp.reset();
    closedAt.clear();
    fp.script(PRIMARY.model, [{ kind: 'headers_then_hang', text: 'a partial answer' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(t);

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    const { stalls } = await assertCuts(h, 'idle', r);
    assert.equal(stalls.length, 1, 'stall.tripOnCut: one cut');
    assert.ok(stalls.every((s) => s.chunks >= 1), 'the chunks before the silence were seen');
    t.diagnostic(`(b) wall time to the answer: ${r.ms} ms`);
  });

  test('(c) a slow but steady stream, longer in total than the idle limit, is never cut', async (t) => {
    fp.reset();
    closedAt.clear();
    const text = 'slow but steady answer, one piece a second';
    fp.script(PRIMARY.model, [{ kind: 'slow_stream', chunks: 6, intervalMs: 1000, text }]);
    const h = await home(t);

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), text, r.stderr);
    assert.equal(r.code, 0);
    assert.ok(r.ms > 5000, 'the stream took longer than the idle limit twice over');
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 });
    assert.equal(fp.requests[0].closed, false);
    assert.deepEqual((await auditRecords(h)).filter((a) => a.type === 'stall'), []);
  });

  test('(d) the user aborts during the silence: a cancel, no cut, no failover', async (t) => {
    fp.reset();
    closedAt.clear();
    fp.script(PRIMARY.model, ['hang']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'must not be asked' }]);
    const h = await home(t);
    const user = new AbortController();
    // SIGINT once the primary has been waiting half the limit.
    const waiter = setInterval(() => {
      const q = fp.requests.find((x) => x.model === PRIMARY.model);
      if (q && Date.now() - q.at >= LIMIT_MS / 2) {
        clearInterval(waiter);
        user.abort();
      }
    }, 10);
    t.after(() => clearInterval(waiter));

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 60_000, signal: user.signal });

    assert.ok(user.signal.aborted, 'the run was interrupted');
    assert.equal(r.code, 130, `exit ${r.code} (${r.signal}): ${r.stderr}`);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 }, 'no retry, no failover');
    assert.equal(fp.requests[0].closed, true, 'the primary connection was closed');
    const open = closedAt.get(fp.requests[0]) - fp.requests[0].at;
    assert.ok(open < LIMIT_MS, `closed by the abort (${open} ms), before any cut`);
    const audit = await auditRecords(h);
    assert.deepEqual(audit.filter((a) => a.type === 'stall' || a.type === 'failover'), []);
  });
});
