// Callers of the replaced plugins, in the real host with its stock retries:
// a plugin that knows only dsh-model-failover's and dsh-llm-quota-retry's
// documented names (e2e/fixtures/compat-listener) keeps hearing and calling
// them once dsh-resilience takes their place.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

const FIXTURE = join(ROOT, 'e2e/fixtures/compat-listener');
const jsonl = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const heard = async (home) => jsonl(join(home.dsh, 'compat-listener/events.jsonl'));
const answers = async (home) => jsonl(join(home.dsh, 'compat-listener/service.jsonl'));

function home(fp, { plugin = { chain: [PRIMARY, SECONDARY] }, listener = {} } = {}) {
  return makeHome({
    baseURL: fp.baseURL,
    plugin,
    primaryRetry: 'stock',
    secondaryRetry: 'stock',
    extraPlugins: [{ dir: FIXTURE, id: 'compat-listener', config: listener }],
  });
}

describe('dsh-model-failover callers in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('a spent primary: circuit-opened and failover reach a model-failover listener as documented', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const h = await home(fp);
    t.after(h.cleanup);

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    const events = await heard(h);
    const opened = events.filter((e) => e.event === 'model-failover/circuit-opened').map((e) => e.payload);
    assert.deepEqual(opened[0], { ...PRIMARY, level: 'model' }, JSON.stringify(events));
    for (const o of opened) assert.deepEqual(Object.keys(o).sort(), ['level', 'model', 'provider']);
    const failover = events.find((e) => e.event === 'model-failover/failover')?.payload;
    const ours = (await auditRecords(h)).find((a) => a.type === 'failover');
    assert.deepEqual(failover, { from: PRIMARY, to: SECONDARY, agentId: ours.agent }, JSON.stringify(events));
    assert.equal(typeof failover.agentId, 'string');
    // Our own record says where in the task it happened: failover 1/4 · turn 1 step 1.
    assert.deepEqual([ours.failovers, ours.maxFailovers, ours.turn, ours.step], [1, 4, 1, 1], JSON.stringify(ours));
  });
});

describe('dsh-llm-quota-retry callers in the real host', () => {
  const POOLS = [{ name: 'main', routes: [PRIMARY, SECONDARY] }, { name: 'spare', routes: [{ provider: 'mock', model: 'mock-a' }] }];
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('outside a wait stateOf is undefined; setPool(session, null) opts the session out', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'fine' }]);
    const h = await home(fp, { plugin: { pools: POOLS, probes: false }, listener: { setPool: null } });
    t.after(h.cleanup);

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'fine', r.stderr);
    const [first] = await answers(h);
    assert.deepEqual([first.isRetrying, first.stateOf, first.setPool], [false, '<undefined>', true], JSON.stringify(first));
    assert.equal(first.poolAfter === '<undefined>' || first.poolAfter === null, true, 'opted out: no pool');
    assert.ok((await auditRecords(h)).some((a) => a.type === 'quota-pool' && a.pool === 'off'), 'audited as the opt-out');
  });

  test('a long-term wait: entered/left carry pending/retrying, at and durationMs; stateOf answers inside it only', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance', { kind: 'success', text: 'recovered on the primary' }]);
    fp.script(SECONDARY.model, ['insufficient_balance']);
    const h = await home(fp, { plugin: { pools: POOLS, probes: false, quota: { longTermDelayMs: 1500 } } });
    t.after(h.cleanup);

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'recovered on the primary', r.stderr);
    const events = await heard(h);
    const entered = events.find((e) => e.event === 'llm-quota-retry/entered');
    const left = events.find((e) => e.event === 'llm-quota-retry/left');
    assert.ok(entered && left, JSON.stringify(events));
    assert.deepEqual([entered.payload.pending, entered.payload.retrying, entered.payload.at], [true, true, entered.payload.nextAttemptAt]);
    assert.equal(typeof entered.payload.session, 'string');
    assert.deepEqual([left.payload.pending, left.payload.retrying, left.payload.at, left.payload.reason], [false, false, left.payload.leftAt, 'recovered']);
    assert.equal(left.payload.durationMs, left.payload.leftAt - left.payload.enteredAt);
    assert.ok(left.payload.durationMs >= 1500);
    // What a caller reads when it hears them.
    assert.equal(entered.asked.isRetrying, true);
    assert.deepEqual([entered.asked.stateOf.pending, entered.asked.stateOf.retrying, entered.asked.stateOf.attempts, entered.asked.stateOf.pool],
      [true, true, 1, 'main'], JSON.stringify(entered.asked));
    assert.deepEqual(left.asked, { isRetrying: false, stateOf: '<undefined>' });
  });
});

describe('a headless run tells its user of a switch and a give-up', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('one line on stderr per switch; none with notice: false', async (t) => {
    for (const notice of [undefined, false]) {
      fp.reset();
      fp.script(PRIMARY.model, ['insufficient_balance']);
      fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
      const h = await home(fp, { plugin: { chain: [PRIMARY, SECONDARY], ...(notice === undefined ? {} : { notice }) } });
      t.after(h.cleanup);

      const r = await runHeadless(h, 'Reply with OK');

      assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
      const lines = cleanStderr(r.stderr).split('\n').filter(Boolean);
      if (notice === false) assert.deepEqual(lines, []);
      else assert.deepEqual(lines, ['dsh-resilience: switched deepseek-official/deepseek-v4-flash → mock/mock-b (QUOTA; failover 1/4 · turn 1 step 1)']);
    }
  });

  test('a give-up: our line, then the host\'s own', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    const h = await home(fp, { plugin: {} }); // no chain: the failure goes back at once
    t.after(h.cleanup);

    const r = await runHeadless(h, 'Reply with OK');

    assert.equal(r.code, 1);
    const lines = cleanStderr(r.stderr).split('\n').filter(Boolean);
    assert.equal(lines[0], 'dsh-resilience: gave up on deepseek-official/deepseek-v4-flash: no channel to fail over to (QUOTA; turn 1 step 1)', r.stderr);
    assert.match(lines.at(-1), /^dsh: QUOTA/);
  });
});
