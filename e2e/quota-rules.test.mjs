// The quota rules' promises (issue #35) in the real host, stock retry
// settings: a move takes a route with little left before waiting an hour,
// the session's switch covers the move as much as the wait, and pool `off`
// waits a spent allowance out where it is, a chain or not.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const A = PRIMARY; // deepseek-official/deepseek-v4-flash
const B = SECONDARY; // mock/mock-b
const MOCK_A = { provider: 'mock', model: 'mock-a' };
const STOCK = { primaryRetry: 'stock', secondaryRetry: 'stock' };
const runner = (config) => ({ dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config });
const lines = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const script = (name, ...args) => [process.execPath, join(ROOT, 'e2e/fixtures/balance', name), ...args];
const heardOf = async (h) => (await lines(join(h.dsh, 'command-runner/events.jsonl'))).map((e) => e.event);

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('402 on A, B reads 2 under its minimum of 5: the retry moves to B at once, no hour-long wait', async (t) => {
  fp.reset();
  fp.script(A.model, ['insufficient_balance']);
  fp.script(B.model, [{ kind: 'success', text: 'answered on the low B' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: {
      pools: [{ name: 'main', routes: [A, B] }], probes: false,
      // B's provider reads 2 (percent) against a minimum of 5; A has no script.
      quota: { balances: [{ provider: 'mock', script: script('fixed.mjs', '2'), unit: 'percent', minimumRemaining: 5, timeoutMs: 8000, refreshMs: 600000 }] },
    },
    extraPlugins: [runner({ beforeFirst: { read: 'main' } })],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'answered on the low B', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(fp.counts(), { [A.model]: 1, [B.model]: 1 });
  const audit = await auditRecords(h);
  assert.ok(audit.some((a) => a.type === 'balance' && a.provider === 'mock' && a.remaining === 2), 'B\'s reading was in before A failed');
  assert.equal((await sessionEvents(h)).filter((e) => e.type === 'llm/retry').length, 0, 'no long-term wait');
  const routed = audit.find((a) => a.type === 'quota-routed');
  assert.deepEqual([routed?.to, routed?.cause], [{ provider: B.provider, model: B.model }, 'QUOTA']);
  const heard = await heardOf(h);
  assert.ok(heard.includes('llm-quota-retry/failover') && !heard.includes('llm-quota-retry/entered'), heard.join(', '));
});

test('switch off (an opt-in row), a pooled session: a 402 on A is neither moved to B nor waited out; the chain handles it', async (t) => {
  fp.reset();
  fp.script(A.model, ['insufficient_balance']);
  fp.script(MOCK_A.model, [{ kind: 'success', text: 'answered along the chain' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { chain: [A, MOCK_A], pools: [{ name: 'main', routes: [A, B] }], probes: false, quota: { defaultEnabled: false } },
    extraPlugins: [runner({})],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'answered along the chain', r.stderr);
  assert.deepEqual(fp.counts(), { [A.model]: 1, [MOCK_A.model]: 1 }, 'never the pool\'s B');
  const audit = await auditRecords(h);
  assert.equal(audit.filter((a) => a.type === 'quota-routed').length, 0);
  assert.equal((await sessionEvents(h)).filter((e) => e.type === 'llm/retry').length, 0, 'no long-term wait');
  const heard = await heardOf(h);
  assert.ok(!heard.includes('llm-quota-retry/failover') && !heard.includes('llm-quota-retry/entered'), heard.join(', '));
});

test('switch off, a pooled session and no chain: the 402 goes back to the host', async (t) => {
  fp.reset();
  fp.script(A.model, ['insufficient_balance']);
  fp.script(B.model, [{ kind: 'success', text: 'moved to B' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { pools: [{ name: 'main', routes: [A, B] }], probes: false, quota: { defaultEnabled: false } },
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.notEqual(r.code, 0, 'the host ended the turn with the failure');
  assert.notEqual(r.signal, 'SIGKILL', 'the host ended by itself');
  assert.deepEqual(fp.counts(), { [A.model]: 1 });
  const audit = await auditRecords(h);
  assert.ok(audit.some((a) => a.type === 'give-up'), JSON.stringify(audit.map((a) => a.type)));
});

test('/quota-pool off with a chain: a 402 is waited out on A, never failed over along the chain', async (t) => {
  fp.reset();
  fp.script(A.model, ['insufficient_balance', { kind: 'success', text: 'waited out on A' }]);
  fp.script(MOCK_A.model, [{ kind: 'success', text: 'moved along the chain' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { chain: [A, MOCK_A], probes: false, quota: { longTermDelayMs: 1500 } },
    extraPlugins: [runner({ beforeFirst: { commands: ['/quota-pool off'] } })],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'waited out on A', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(fp.counts(), { [A.model]: 2 }, 'never the chain\'s mock-a');
  const [off] = await lines(join(h.dsh, 'command-runner/results.jsonl'));
  assert.match(off.result.result.text, /pool: off, never changes provider for a spent allowance/);
  const retries = (await sessionEvents(h)).filter((e) => e.type === 'llm/retry');
  assert.deepEqual(retries.map((e) => [e.data.delayMs, e.data.provider]), [[1500, A.provider]]);
  const heard = await heardOf(h);
  assert.ok(heard.includes('llm-quota-retry/entered') && heard.includes('llm-quota-retry/left'), heard.join(', '));
  assert.ok(!heard.includes('dsh-resilience/failover'), heard.join(', '));
});

test('balance scripts: an error beside a reading is the provider refusing (a missing reading); an unresolved apiKeyEnv warns and the script still runs', async (t) => {
  fp.reset();
  fp.script('*', [{ kind: 'success', text: 'ok' }]);
  const balances = [
    { provider: 'mock', script: script('refused.mjs'), timeoutMs: 8000 },
    { provider: 'deepseek-official', script: script('fixed.mjs', '7'), apiKeyEnv: 'DSHR_NEVER_SET_BALANCE_KEY', unit: 'CNY', timeoutMs: 8000 },
  ];
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { pools: [{ name: 'main', routes: [A, B] }], probes: false, quota: { balances } },
    extraPlugins: [runner({ beforeFirst: { read: 'main' }, commands: ['/quota-routes main'] })],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');
  assert.equal(r.code, 0, r.stderr);

  const audit = await auditRecords(h);
  const reading = (provider) => audit.find((a) => a.type === 'balance' && a.provider === provider);
  assert.deepEqual([reading('mock')?.ok, reading('mock')?.remaining, reading('mock')?.why], [false, undefined, 'provider refused']);
  const keyless = reading('deepseek-official');
  assert.deepEqual([keyless?.ok, keyless?.remaining], [true, 7], 'the script ran without the credential');
  assert.match(keyless?.warning ?? '', /credential DSHR_NEVER_SET_BALANCE_KEY not found/);
  const routes = (await lines(join(h.dsh, 'command-runner/results.jsonl'))).find((x) => x.command === '/quota-routes main');
  assert.match(routes.result.result.text, /mock\/mock-b\s+yes\s+no-reading\s+missing, \d+ s ago/);
  assert.match(routes.result.result.text, /deepseek-official\/deepseek-v4-flash\s+yes\s+reading\s+7 CNY/);
  assert.ok(!JSON.stringify(audit).includes('invalid api key'), 'a script\'s output is never logged');
});
