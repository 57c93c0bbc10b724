// Where routing features meet, in the real host with its STOCK retry
// settings: the user's own model pick in a pool session, a balance reading
// steering a new chain session, a session's home across a host restart, and
// what an empty chain does with a transient failure the host does not retry.
// Sessions that pick a model or resume are driven by a test-only plugin
// (e2e/fixtures/session-driver) through the host's own agent registry and
// model selection: headless DSH has a fixed selection and no resume.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, PRIMARY_PRO, ROOT, runHeadless, SECONDARY } from './harness.mjs';

const A = PRIMARY; // deepseek-official/deepseek-v4-flash
const B = SECONDARY; // mock/mock-b
const STOCK = { primaryRetry: 'stock', secondaryRetry: 'stock' };
const driver = (config) => ({ dir: join(ROOT, 'e2e/fixtures/session-driver'), id: 'session-driver', config });
const lines = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const turns = (h) => lines(join(h.dsh, 'session-driver/turns.jsonl'));
const key = (c) => `${c.provider}/${c.model}`;

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('a session in a pool: the user\'s own pick answers, and the pool route gets no request after it', async (t) => {
  fp.reset();
  fp.script(A.model, [{ kind: 'success', text: 'on the pool route' }]);
  fp.script(PRIMARY_PRO.model, [{ kind: 'success', text: 'the pick answers' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { pools: [{ name: 'main', routes: [A, B] }], probes: false },
    extraPlugins: [driver({ turns: [{ text: 'first' }, { text: 'second', pick: PRIMARY_PRO }, { text: 'third' }] })],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');
  assert.equal(r.code, 0, r.stderr);

  const said = (await turns(h)).map((x) => x.said);
  assert.deepEqual(said, ['on the pool route', 'the pick answers', 'the pick answers']);
  // The headless task and the driven session's first turn on the pool route; every later request on the pick.
  const models = fp.requests.map((x) => x.model);
  assert.deepEqual(models, [A.model, A.model, PRIMARY_PRO.model, PRIMARY_PRO.model], JSON.stringify(models));
  const picks = (await auditRecords(h)).filter((a) => a.type === 'session-pick');
  assert.deepEqual(picks.map((p) => key(p.pick)), [key(PRIMARY_PRO)]);
});

test('a balance reading below its minimum: the first request of a new chain session goes to the secondary', async (t) => {
  fp.reset();
  fp.script(A.model, [{ kind: 'success', text: 'on the primary' }]);
  fp.script(B.model, [{ kind: 'success', text: 'on the secondary' }]);
  const balances = [{ provider: A.provider, script: [process.execPath, join(ROOT, 'e2e/fixtures/balance/fixed.mjs'), '0'], minimumRemaining: 1 }];
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK,
    plugin: { chain: [A, B], probes: false, quota: { balances } },
    // The driven session starts once the reading is in (the service's report shows it).
    extraPlugins: [driver({ waitReading: A.provider, turns: [{ text: 'first' }] })],
  });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');
  assert.equal(r.code, 0, r.stderr);

  const [first] = await turns(h);
  assert.equal(first.said, 'on the secondary');
  const reading = (await auditRecords(h)).find((a) => a.type === 'balance' && a.provider === A.provider);
  assert.deepEqual([reading.ok, reading.remaining], [true, 0]);
  // No failover moved it: it started there.
  assert.equal((await auditRecords(h)).filter((a) => a.type === 'failover').length, 0);
});

test('after a host restart, a session on its failover route goes back home: a return row, home kept', async (t) => {
  fp.reset();
  fp.script(A.model, ['insufficient_balance', { kind: 'success', text: 'home again' }]);
  fp.script(B.model, [{ kind: 'success', text: 'on the secondary' }]);
  const plugin = { chain: [A, B], probes: false, cooldownMs: 1000 };
  // The headless task itself runs on B, out of the way; the driven session starts on A.
  const h = await makeHome({
    baseURL: fp.baseURL, ...STOCK, plugin, defaultModel: key(B),
    extraPlugins: [driver({ start: A, turns: [{ text: 'first' }] })],
  });
  t.after(h.cleanup);

  const first = await runHeadless(h, 'Reply with OK');
  assert.equal(first.code, 0, first.stderr);
  const [one] = await turns(h);
  assert.equal(one.said, 'on the secondary');
  const settings = JSON.parse(await readFile(join(h.dsh, 'dsh-resilience/quota-sessions.json'), 'utf8'));
  assert.deepEqual(settings.sessions[one.session]?.home, A, 'the home is kept for a restarted host');
  // The primary's open time is over before the second host starts (a condition, not a sleep).
  const opened = (await auditRecords(h)).find((a) => a.type === 'circuit-open' && a.channel.model === A.model);
  while (Date.now() <= Date.parse(opened.openUntil)) await new Promise((res) => setTimeout(res, 50));

  // The second host resumes the same session: the host proposes the route it last used (B).
  const h2config = driver({ start: A, resume: true, turns: [{ text: 'second' }] });
  await rewriteDriver(h, h2config.config);
  const second = await runHeadless(h, 'Reply with OK');
  assert.equal(second.code, 0, second.stderr);

  const [, two] = await turns(h);
  assert.equal(two.session, one.session, 'the same session');
  assert.equal(two.said, 'home again');
  const back = (await auditRecords(h)).find((a) => a.type === 'return');
  assert.ok(back, 'a return row');
  assert.deepEqual([back.from, back.to], [key(B), key(A)]);
  const after = JSON.parse(await readFile(join(h.dsh, 'dsh-resilience/quota-sessions.json'), 'utf8'));
  assert.equal(after.sessions[one.session]?.home, undefined, 'home again: nothing left to keep');
});

test('an empty chain retries a transient code the host does not retry on the same channel, and never reroutes', async (t) => {
  fp.reset();
  // pi-ai reports an unrecognised failure as PI_AI_ERROR, which the stock host retry does not cover.
  fp.script(B.model, [{ kind: 'status', status: 409, message: 'conflict, try again' }, { kind: 'success', text: 'answered on the same channel' }]);
  const h = await makeHome({ baseURL: fp.baseURL, ...STOCK, plugin: {}, defaultModel: key(B) });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'answered on the same channel', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(fp.counts(), { [B.model]: 2 });
  const audit = await auditRecords(h);
  assert.equal(audit.filter((a) => a.type === 'failover').length, 0);
  const retries = audit.filter((a) => a.type === 'retry');
  assert.equal(retries.length, 1);
  assert.deepEqual(retries[0].channel, B);
});

/** The driver's config for the home's next run (the row is restated in the overlay). */
async function rewriteDriver(h, config) {
  const { writeFile } = await import('node:fs/promises');
  const path = join(h.dsh, 'profiles/headless/cordis.patch.yml');
  const text = await readFile(path, 'utf8');
  await writeFile(path, text.replace(/(- id: session-driver\n {2}config: ).*/, `$1${JSON.stringify(config)}`));
}
