// Failover as fast as the evidence allows, in the real host with the STOCK
// dsh-llm-retry (no retryPolicy on either route: mode normal, 5 retries,
// 0.5 s doubling to 10 s): what a user has after `dsh plugin add`.
// Wall times are reported (t.diagnostic) and bounded by what the mechanism
// implies, never by a speed target: the provider's counters are the proof.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];
const P = `${PRIMARY.provider}/${PRIMARY.model}`;
const ours = (events) => events.filter((e) => e.type === 'llm/retry' && e.data.policyKey === '["dsh-resilience"]');
const hosts = (events) => events.filter((e) => e.type === 'llm/retry' && e.data.policyKey !== '["dsh-resilience"]');

describe('stock host retry settings', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  async function stockHome(t, plugin, extra = {}) {
    const h = await makeHome({ baseURL: fp.baseURL, plugin, primaryRetry: 'stock', secondaryRetry: 'stock', streamIdleTimeoutMs: 300_000, ...extra });
    t.after(h.cleanup);
    return h;
  }
  /** ms from the primary's first request to the first request of model. */
  const askedAfter = (model) => {
    const first = fp.requests.find((q) => q.model === PRIMARY.model);
    const then = fp.requests.find((q) => q.model === model);
    return then.at - first.at;
  };

  for (const [name, step, code] of [['429 on every request', 'rate_limit', 'RATE_LIMIT'], ['connection reset on every request', 'reset', 'TRANSPORT']]) {
    test(`${name}: two primary requests, then the request spills to the secondary`, async (t) => {
      fp.reset();
      fp.script(PRIMARY.model, [step]);
      fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
      const h = await stockHome(t, { chain: CHAIN });

      const r = await runHeadless(h, 'Reply with OK');

      assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
      assert.equal(r.code, 0);
      assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
      const events = await sessionEvents(h);
      assert.equal(hosts(events).length, 1, 'the host retried once; the second failure spilled (spillAfter 2)');
      const spillRows = ours(events);
      assert.deepEqual(spillRows.map((e) => [e.data.delayMs, e.data.provider]), [[0, SECONDARY.provider]], 'the spill, shown as a retry with no wait');
      const spill = (await auditRecords(h)).find((a) => a.type === 'spill');
      assert.deepEqual([spill.from, spill.to, spill.code], [PRIMARY, SECONDARY, code]);
      // The host's third request would have come 1.5 s (±10%) after the first: it
      // never came (the counts prove it); the time is reported, bounded only for sanity.
      const ms = askedAfter(SECONDARY.model);
      assert.ok(ms < 10_000, `the secondary was asked ${ms} ms after the primary's first request`);
      t.diagnostic(`${name}: secondary asked ${ms} ms after the primary's first request; answer at ${r.ms} ms (process start to exit)`);
    });
  }

  test('accepts, then silence (stall limits 5 s): one attempt cut, the secondary answers', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['hang']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer after the stall' }]);
    const h = await stockHome(t, { chain: CHAIN, stall: { firstChunkMs: 5000, idleMs: 5000 } });

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 90_000 });

    assert.equal(r.stdout.trim(), 'answer after the stall', r.stderr);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 });
    assert.equal(fp.requests.find((q) => q.model === PRIMARY.model).closed, true, 'the cut closed the connection');
    const audit = await auditRecords(h);
    assert.equal(audit.filter((a) => a.type === 'stall').length, 1);
    assert.ok(audit.some((a) => a.type === 'circuit-open' && `${a.channel.provider}/${a.channel.model}` === P && a.cause === 'stall'));
    // One silence limit, not two: a second cut would put the secondary 10 s out.
    const ms = askedAfter(SECONDARY.model);
    // The process's own start-up (seconds under load) is not the plugin's: only the
    // interval between the two provider requests says how many silence limits passed.
    assert.ok(ms >= 4500 && ms < 10_000, `the secondary was asked ${ms} ms after the primary's request`);
    t.diagnostic(`hang: secondary asked ${ms} ms after the primary's request; answer at ${r.ms} ms`);
  });

  test('500, 500, ok: the blip costs one answer from the secondary; the primary stays closed', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['server_error', 'server_error', { kind: 'success', text: 'the primary recovered' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'the secondary, once' }]);
    const h = await stockHome(t, { chain: CHAIN });

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'the secondary, once', r.stderr);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const audit = await auditRecords(h);
    assert.equal(audit.filter((a) => a.type === 'failover' || a.type === 'circuit-open').length, 0);
    assert.equal(audit.filter((a) => a.type === 'spill').length, 1);
    t.diagnostic(`500, 500, ok: answer at ${r.ms} ms`);
  });

  test('429 with the chain empty: the plugin changes nothing', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    const h = await stockHome(t, {});

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.code, 1);
    assert.match(r.stderr, /RATE_LIMIT/);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 6 }, 'the first request and the host\'s five retries');
    const events = await sessionEvents(h);
    assert.equal(hosts(events).length, 5);
    assert.equal(ours(events).length, 0);
    const audit = await auditRecords(h);
    assert.equal(audit.filter((a) => a.type === 'failover' || a.type === 'retry').length, 0);
    t.diagnostic(`empty chain: the host failed the task at ${r.ms} ms`);
  });

  test('chain [primary, missing-provider/x, secondary]: the unroutable target is skipped, nothing held', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await stockHome(t, { chain: [PRIMARY, { provider: 'missing-provider', model: 'x' }, SECONDARY] });

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const audit = await auditRecords(h);
    const warned = audit.filter((a) => a.type === 'unroutable');
    assert.deepEqual(warned.map((a) => [a.keys, a.channel, a.code]), [[['chain[1]'], { provider: 'missing-provider', model: 'x' }, 'NO_ADAPTER']]);
    assert.deepEqual(audit.filter((a) => a.type === 'spill').map((a) => a.to), [SECONDARY]);
    assert.ok(ours(await sessionEvents(h)).every((e) => e.data.delayMs === 0), 'no request held');
    t.diagnostic(`missing provider skipped: answer at ${r.ms} ms`);
  });

  test('the only fallback\'s model is not listed: the task ends with the primary\'s own failure', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    // giveUpAfterMs below the cooldown: once the host's budget is spent, the plugin's wait
    // for the primary to come back is longer than the agent may recover, so it gives up.
    const h = await stockHome(t, { chain: [PRIMARY, { provider: SECONDARY.provider, model: 'not-listed' }], giveUpAfterMs: 30_000 });

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.code, 1);
    assert.match(r.stderr, /dsh: RATE_LIMIT/, 'not UNKNOWN_MODEL: an error about a model the user never chose');
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 6 }, 'no fallback: the host\'s whole budget, as without the plugin');
    const warned = (await auditRecords(h)).filter((a) => a.type === 'unroutable');
    assert.deepEqual(warned.map((a) => [a.keys, a.code]), [[['chain[1]'], 'UNKNOWN_MODEL']]);
    t.diagnostic(`unlisted fallback: the task ended RATE_LIMIT at ${r.ms} ms`);
  });

  test('a fallback whose credential is missing fails at send time: the primary\'s own failure goes back at once', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    const h = await stockHome(t, { chain: [PRIMARY, { provider: 'nokey', model: 'mock-b' }] }, { noKeyRoute: true });

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.code, 1);
    assert.match(r.stderr, /dsh: RATE_LIMIT/, `not MISSING_CREDENTIAL: ${r.stderr}`);
    // Two on the primary, then the spill finds the fallback cannot be sent to.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2 });
    const audit = await auditRecords(h);
    assert.deepEqual(audit.filter((a) => a.type === 'unroutable').map((a) => [a.keys, a.code]), [[['chain[1]'], 'MISSING_CREDENTIAL']]);
    assert.equal(audit.find((a) => a.type === 'give-up')?.reason, 'no-routable-fallback');
    t.diagnostic(`missing credential: the task ended RATE_LIMIT at ${r.ms} ms`);
  });
});
