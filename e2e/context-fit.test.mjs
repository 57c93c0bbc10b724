// Context-fit routing in the real host, stock retries (issue #20): a failover,
// in a chain or a pool, never goes to a target whose window cannot hold the
// session's context, and a window refusal (CONTEXT_WINDOW_EXCEEDED) moves to
// a larger window. The fake provider prices each prompt and refuses one beyond
// a model's real window as a real provider does, so its records prove who got
// what.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless } from './harness.mjs';

const SMALL = { provider: 'mock', model: 'mock-a' };
const LARGE = { provider: 'mock', model: 'mock-b' };
// About 12k tokens of context: more than a 4k window holds, far less than 64k.
const LONG_TASK = `Reply with OK. Context follows.\n${'lorem ipsum dolor sit amet '.repeat(1800)}`;
const stock = { primaryRetry: 'stock', secondaryRetry: 'stock' };

describe('context-fit routing in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('a context beyond the first fallback\'s window skips it; the next fallback that fits answers', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(LARGE.model, [{ kind: 'success', text: 'answered by the large window' }]);
    fp.window(SMALL.model, 4096); // its real window too: were it sent there, it would refuse
    const home = await makeHome({ baseURL: fp.baseURL, ...stock, mockWindows: { 'mock-a': 4096, 'mock-b': 65536 },
      plugin: { chain: [PRIMARY, SMALL, LARGE] } });
    t.after(home.cleanup);

    const r = await runHeadless(home, LONG_TASK);

    assert.equal(r.stdout.trim(), 'answered by the large window', r.stderr);
    assert.equal(r.code, 0);
    const counts = fp.counts();
    assert.equal(counts[SMALL.model], undefined, `the small window got nothing: ${JSON.stringify(counts)}`);
    assert.equal(counts[LARGE.model], 1);
    const large = fp.requests.find((q) => q.model === LARGE.model);
    assert.ok(large.promptTokens > 4096 && large.promptTokens < 65536, `the large window got ${large.promptTokens} tokens`);
    const audit = await auditRecords(home);
    const skipped = audit.find((a) => a.type === 'skipped-too-small');
    assert.ok(skipped, `a skipped-too-small record: ${JSON.stringify(audit.map((a) => a.type))}`);
    assert.deepEqual(skipped.channel, SMALL);
    assert.equal(skipped.contextWindow, 4096);
    assert.ok(skipped.contextTokens > skipped.usable, JSON.stringify(skipped));
    const failover = audit.find((a) => a.type === 'failover');
    assert.deepEqual([failover.from, failover.to], [PRIMARY, LARGE]);
  });

  test('a pool session: a route too small for the context is skipped, and the next route that fits answers', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(LARGE.model, [{ kind: 'success', text: 'answered by the large route' }]);
    fp.window(SMALL.model, 4096);
    // The session starts on the pool's first route (the host's default model): it is in the pool.
    const home = await makeHome({ baseURL: fp.baseURL, ...stock, mockWindows: { 'mock-a': 4096, 'mock-b': 65536 },
      plugin: { pools: [{ name: 'main', routes: [PRIMARY, SMALL, LARGE] }], quota: {}, probes: false } });
    t.after(home.cleanup);

    const r = await runHeadless(home, LONG_TASK);

    assert.equal(r.stdout.trim(), 'answered by the large route', r.stderr);
    assert.equal(r.code, 0);
    const counts = fp.counts();
    assert.equal(counts[SMALL.model], undefined, `the small route got nothing: ${JSON.stringify(counts)}`);
    assert.equal(counts[LARGE.model], 1);
    const audit = await auditRecords(home);
    const skipped = audit.find((a) => a.type === 'skipped-too-small');
    assert.ok(skipped, `a skipped-too-small record: ${JSON.stringify(audit.map((a) => a.type))}`);
    assert.deepEqual([skipped.channel, skipped.contextWindow], [SMALL, 4096]);
    assert.ok(audit.some((a) => a.type === 'quota-routed' && a.to?.model === LARGE.model), 'the pool moved the session to the large route');
  });

  test('CONTEXT_WINDOW_EXCEEDED on the primary fails over to a window that holds the context, and the turn completes', async (t) => {
    fp.reset();
    // mock-a declares 64k but holds only 2k: the host's estimate and its declaration are both wrong for it.
    fp.window(SMALL.model, 2000);
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'answered after the window refusal' }]);
    const home = await makeHome({ baseURL: fp.baseURL, ...stock, defaultModel: `${SMALL.provider}/${SMALL.model}`,
      mockWindows: { 'mock-a': 65536, 'mock-b': 4096 }, plugin: { chain: [SMALL, LARGE, PRIMARY] } });
    t.after(home.cleanup);

    const r = await runHeadless(home, LONG_TASK);

    assert.equal(r.stdout.trim(), 'answered after the window refusal', r.stderr);
    assert.equal(r.code, 0);
    // One refusal on the primary, nothing to the 4k fallback, the 1M one answers.
    assert.deepEqual(fp.requests.map((q) => [q.model, q.step]),
      [[SMALL.model, 'context_window_exceeded'], [PRIMARY.model, 'success']]);
    const audit = await auditRecords(home);
    const failover = audit.find((a) => a.type === 'failover');
    assert.deepEqual([failover.from, failover.to, failover.code], [SMALL, PRIMARY, 'CONTEXT_WINDOW_EXCEEDED']);
    assert.ok(audit.some((a) => a.type === 'skipped-too-small' && a.channel.model === LARGE.model));
    assert.ok(!audit.some((a) => a.type === 'circuit-open'), 'a window refusal does not count against the channel');
  });
});
