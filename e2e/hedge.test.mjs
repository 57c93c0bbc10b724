// Hedged first tokens in the real host (issue #36), stock retry settings,
// chain [primary, secondary]: a primary whose first token comes only after
// 20 s is hedged after hedge.afterMs; the secondary answers, the primary's
// connection is closed, one request each, and nothing of the primary reaches
// the session. Without `hedge` the same primary is waited for and nothing is
// sent twice.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];
const SLOW_MS = 20_000;
const AFTER_MS = 2000;

/** Resolves once cond() holds, checked every few ms (a condition, not a sleep). */
async function until(cond, what, limitMs = 60_000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > limitMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** The text the session's assistant messages hold. */
const assistantText = (events) => events.filter((e) => e.type === 'assistant/message')
  .flatMap((e) => e.data.message.content).filter((b) => b.type === 'text').map((b) => b.text).join('|');

describe('hedged first tokens in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(async () => { await fp.close(); });

  const home = (t, plugin) => makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, ...plugin }, primaryRetry: 'stock', secondaryRetry: 'stock', streamIdleTimeoutMs: 300_000 })
    .then((h) => { t.after(h.cleanup); return h; });

  test('hedge.afterMs 2000: the secondary is asked within 3 s and answers; one request each; the primary closed', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', firstTokenMs: SLOW_MS, text: 'late answer from the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(t, { hedge: { afterMs: AFTER_MS } });

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    assert.equal(cleanStderr(r.stderr), '', 'no host error, no warning');
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 }, 'one request each');
    const [primary] = fp.requests.filter((q) => q.model === PRIMARY.model);
    const [secondary] = fp.requests.filter((q) => q.model === SECONDARY.model);
    const gap = secondary.at - primary.at;
    assert.ok(gap <= 3000, `the secondary was asked ${gap} ms after the primary`);
    await until(() => primary.closed, "the primary's connection closed");
    const events = await sessionEvents(h);
    assert.equal(assistantText(events), 'answer from the secondary', 'nothing of the primary reaches the session');
    assert.ok(!JSON.stringify(events).includes('late answer from the primary'));
    assert.equal(events.filter((e) => e.type === 'llm/retry').length, 0, 'no retry: a hedge is not a failure');
    const audit = await auditRecords(h);
    const hedges = audit.filter((a) => a.type === 'hedge');
    assert.equal(hedges.length, 1, JSON.stringify(audit));
    assert.deepEqual([hedges[0].from, hedges[0].to, hedges[0].winner, hedges[0].afterMs], [PRIMARY, SECONDARY, 'hedge', AFTER_MS]);
    assert.equal(audit.filter((a) => a.type === 'circuit-open' || a.type === 'failover').length, 0, 'no breaker opened, no failover');
    t.diagnostic(`hedge: secondary asked ${gap} ms after the primary; answer ${r.answerMs} ms from dsh's start; ` +
      `request's first token ${hedges[0].firstTokenMs} ms; primary waited ${hedges[0].loserWaitMs} ms before its abort`);
  });

  test('without hedge: the primary is waited for, nothing is sent twice', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', firstTokenMs: SLOW_MS, text: 'late answer from the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(t, {});

    const r = await runHeadless(h, 'Reply with OK', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'late answer from the primary', r.stderr);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 }, 'the primary alone, once');
    const events = await sessionEvents(h);
    assert.equal(assistantText(events), 'late answer from the primary');
    assert.equal((await auditRecords(h)).filter((a) => a.type === 'hedge').length, 0);
    t.diagnostic(`no hedge: answer ${r.answerMs} ms from dsh's start`);
  });

  test('recovery stay: the session the hedge moved stays on the secondary for its next request', async (t) => {
    // The host's header still names the primary after a won hedge; the module
    // keeps the session where the hedge answered, as after a failover.
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', firstTokenMs: SLOW_MS, text: 'late answer from the primary' }]);
    const h = await home(t, { hedge: { afterMs: AFTER_MS }, recovery: 'stay' });
    await writeFile(join(h.dir, 'home/notes.txt'), 'nothing to see\n');
    fp.script(SECONDARY.model, [
      { kind: 'tool_call', name: 'read', arguments: { file_path: join(h.dir, 'home/notes.txt') } },
      { kind: 'success', text: 'second answer from the secondary' },
    ]);

    const r = await runHeadless(h, 'Read the notes', { timeoutMs: 120_000 });

    assert.equal(r.stdout.trim(), 'second answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 2 }, 'the step after the hedge went to the secondary');
    const hedges = (await auditRecords(h)).filter((a) => a.type === 'hedge');
    assert.equal(hedges.length, 1);
    assert.equal(hedges[0].winner, 'hedge');
  });
});
