// The foundation's end-to-end proof: the real DSH host, headless, with the
// plugin installed by `dsh plugin add`, against the project's fake provider.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];

describe('failover in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('429 every time: the host retries once, then the request spills to the secondary and the task answers', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN } });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    // The spill, told on stderr where a headless user looks (host-shim/notice.js); nothing else.
    assert.equal(cleanStderr(r.stderr), 'dsh-resilience: switched deepseek-official/deepseek-v4-flash → mock/mock-b for this request (RATE_LIMIT ×2; spill)');
    // The first request and one host retry on the primary (spillAfter 2), then one on the secondary.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const events = await sessionEvents(home);
    assert.equal(events.filter((e) => e.type === 'llm/retry').length, 2, 'the host\'s retry, then the spill\'s row');
    const headers = events.filter((e) => e.type === 'request/header').map((e) => e.data.header?.config?.model);
    assert.ok(headers.includes(SECONDARY.model), `a request/header names the secondary: ${JSON.stringify(headers)}`);
    const audit = await auditRecords(home);
    const spill = audit.find((a) => a.type === 'spill');
    assert.deepEqual(
      { from: spill.from, to: spill.to, code: spill.code },
      { from: PRIMARY, to: SECONDARY, code: 'RATE_LIMIT' },
    );
    assert.ok(!audit.some((a) => a.type === 'circuit-open' && a.channel.provider === PRIMARY.provider && a.channel.model === PRIMARY.model),
      'one request\'s failures do not open the primary');
  });

  test('429 every time with spillAfter 0: the host retries, then the plugin opens the primary and fails over', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, spillAfter: 0 } });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    // The first request and two host retries, then one on the secondary.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 3, [SECONDARY.model]: 1 });
    const audit = await auditRecords(home);
    const failover = audit.find((a) => a.type === 'failover');
    assert.deepEqual([failover.from, failover.to, failover.code], [PRIMARY, SECONDARY, 'RATE_LIMIT']);
    assert.ok(audit.some((a) => a.type === 'circuit-open' && a.channel.provider === PRIMARY.provider && a.channel.model === PRIMARY.model));
  });

  test('402 insufficient balance: failover on the first failure, no host retries wasted', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'paid for by the secondary' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN } });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'paid for by the secondary', r.stderr);
    assert.equal(r.code, 0);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 });
    const events = await sessionEvents(home);
    assert.equal(events.filter((e) => e.type === 'llm/retry').length, 0);
    const failover = (await auditRecords(home)).find((a) => a.type === 'failover');
    assert.equal(failover.class, 'quota');
  });

  test('without the plugin row configured (empty chain) a failure is the host\'s to report', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: {} });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.code, 1);
    assert.match(r.stderr, /QUOTA/);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 });
    const giveUp = (await auditRecords(home)).find((a) => a.type === 'give-up');
    assert.equal(giveUp.reason, 'no-routable-fallback');
  });
});

describe('bad config in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  for (const [name, plugin, key] of [
    ['an unknown key', { chain: CHAIN, cooldwnMs: 5 }, 'cooldwnMs'],
    ['a malformed value', { chain: CHAIN, failureThreshold: 'three' }, 'failureThreshold'],
    ['a chain row without a model', { chain: [{ provider: 'mock' }] }, 'chain[0].model'],
    ['a shim key of the wrong type', { stateDir: 42 }, 'stateDir'],
  ]) {
    test(`${name} stops activation with the key's name`, async (t) => {
      const home = await makeHome({ baseURL: fp.baseURL, plugin });
      t.after(home.cleanup);
      const r = await runHeadless(home, 'Reply with OK');
      assert.notEqual(r.code, 0);
      assert.ok(r.stderr.includes(key), `stderr names ${key}: ${r.stderr}`);
      // A policy key is the module's to check, and the module comes up behind
      // activation (start-up cost): a refused row ends the first turn, naming
      // the key, before any model request; nothing but the host's empty answer line is printed.
      assert.equal(r.stdout.trim(), '');
    });
  }
});
