// The cold start in the real host (host-shim/cold-start.js): a run after a
// quiet one, or a first run whose row routes no session by rule, sends its
// first request before the policy module is up, and the module, brought up
// behind it, decides whatever that request meets as if it had routed it: a
// dead primary, a stalled stream. A run after one that left the primary open
// waits for the module and starts on the secondary. The host's stock retry
// settings throughout.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];
const route = (c) => ({ provider: c.provider, model: c.model }); // audit records carry channels as objects

describe('the cold start in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  /**
   * A home whose first run answered from the primary: its module left the word for a cold start.
   * The answer takes a second, so the module comes up behind the first request, as in any run
   * longer than its kick (a run that ends first never brings it up, and leaves no word).
   */
  async function quietHome(t, plugin = {}) {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, ...plugin }, streamIdleTimeoutMs: 300_000 });
    t.after(home.cleanup);
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'first run', delayMs: 1000 }]);
    const r = await runHeadless(home, 'Reply with OK');
    assert.equal(r.stdout.trim(), 'first run', r.stderr);
    const word = JSON.parse(await readFile(join(home.dsh, 'dsh-resilience/cold-start.json'), 'utf8'));
    assert.equal(word.coldPass, true, 'the first run left the word');
    return home;
  }

  /** The audit records of the last run: from its `stop` back to the one before. */
  async function lastRun(home) {
    const audit = await auditRecords(home);
    const end = audit.findLastIndex((a) => a.type === 'stop');
    return audit.slice(audit.findLastIndex((a, i) => a.type === 'stop' && i < end) + 1, end + 1);
  }

  test('the second run\'s first request goes before the module is up; a primary dead by then is left as ever, and nothing is missed', async (t) => {
    const home = await quietHome(t);
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    // As without a cold start (failover.test.mjs): the first request and the host's retry on the primary, then the spill.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const run = await lastRun(home);
    const types = run.map((a) => a.type);
    const cold = run.find((a) => a.type === 'cold-pass');
    assert.deepEqual(cold?.channel, route(PRIMARY), types.join(' '));
    assert.ok(types.indexOf('boot') < types.indexOf('cold-pass') && types.indexOf('cold-pass') < types.indexOf('spill'), types.join(' '));
    assert.ok(!types.includes('cold-pass-missed'), types.join(' '));
  });

  test('a first run, in a home with no health records and a row with no pools or quota rules, sends its first request cold too: the same outcome, nothing missed', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN }, streamIdleTimeoutMs: 300_000 });
    t.after(home.cleanup);
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const types = (await lastRun(home)).map((a) => a.type);
    assert.ok(types.indexOf('boot') < types.indexOf('cold-pass') && types.indexOf('cold-pass') < types.indexOf('spill'), types.join(' '));
    assert.ok(!types.includes('cold-pass-missed'), types.join(' '));
  });

  test('a first request sent cold that stalls is cut by the watchdog once the module is up, and the secondary answers', async (t) => {
    const limit = 5000;
    const home = await quietHome(t, { stall: { firstChunkMs: limit, idleMs: limit } });
    fp.reset();
    fp.script(PRIMARY.model, ['hang']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    const run = await lastRun(home);
    const types = run.map((a) => a.type);
    assert.ok(types.includes('cold-pass'), types.join(' '));
    const stall = run.find((a) => a.type === 'stall');
    assert.equal(stall?.bound, 'first-chunk', types.join(' '));
    assert.ok(stall.silenceMs >= limit && stall.silenceMs < 30_000, `counted from the request's opening: ${stall.silenceMs} ms`);
    assert.equal(run.find((a) => a.type === 'failover')?.code, 'TIMEOUT');
  });

  test('after a run that left the primary open, the next one waits for the module and starts on the secondary', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, spillAfter: 0, cooldownMs: 600_000 } });
    t.after(home.cleanup);
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    assert.equal((await runHeadless(home, 'Reply with OK')).stdout.trim(), 'answer from the secondary');
    const word = JSON.parse(await readFile(join(home.dsh, 'dsh-resilience/cold-start.json'), 'utf8'));
    assert.equal(word.coldPass, false, 'an open primary: the next module would route away from it');

    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'from the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: 1 }, 'the open primary was not asked');
    assert.ok(!(await lastRun(home)).some((a) => a.type === 'cold-pass'));
  });
});
