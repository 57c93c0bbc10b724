// A session's home and the user's pick outlive the process: the module
// reports them (failover home, session-route, returned), the shim keeps them
// with the session's settings and hands them back on the agent's first
// request after a restart. Against the real module, with no quota rules: the
// home matters to every chain session.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { carryOut } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { QuotaRules } from '../quota.js';

const quiet = { warn() {}, info() {} };
const ROW = { chain: [{ provider: 'pa', model: 'm' }, { provider: 'pb', model: 'm' }], probes: false };
const A = { provider: 'pa', model: 'm' };
const B = { provider: 'pb', model: 'm' };
let compiled;
before(async () => { compiled = await compileModule(); });

/** One host process: the module, the quota shell, and the effects carried out into `records`. */
function host(path, records) {
  const policy = new Policy(compiled, ROW, quiet);
  const q = new QuotaRules({
    ctx: { get: () => undefined }, policy, settingsPath: path, report: () => {}, emit: () => {},
    lifetime: new AbortController().signal,
    decide: (event) => {
      const out = policy.decide(Date.now(), event);
      carryOut(out?.effects ?? [], { ctx: { emit() {} }, audit: { write: (r) => records.push(r) }, logger: quiet, quota: q,
        healthChanged() {}, scheduleWake() {}, probe() {} });
      return out;
    },
  });
  return q;
}

const agent = { id: 'a1', session: { id: 's1', header: {} } };
const saved = async (path) => JSON.parse(await readFile(path, 'utf8')).sessions.s1;

test('a restarted host sends a session on its failover route home, with a return row; the pick is kept too', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'route-')), 'quota-sessions.json');
  const before = [];
  const one = host(path, before);
  one.track(agent);
  one.decide({ kind: 'request', agent: 'a1', proposed: A });
  one.decide({ kind: 'request-error', agent: 'a1', provider: 'pa', phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
  assert.equal(one.decide({ kind: 'request', agent: 'a1', proposed: A }).verdict.provider, 'pb');
  await one.settings.queue;
  assert.deepEqual((await saved(path)).home, A, 'the failover\'s home is kept');

  // The next process: A is healthy again (fresh health), the host proposes B, the route it last used.
  const after = [];
  const two = host(path, after);
  await two.load();
  two.track(agent);
  const v = two.decide({ kind: 'request', agent: 'a1', proposed: B }).verdict;
  assert.deepEqual([v.kind, v.provider], ['swap', 'pa']);
  assert.deepEqual(after.filter((r) => r.type === 'return').map((r) => [r.from, r.to]), [['pb/m', 'pa/m']]);
  await two.settings.queue;
  assert.equal((await saved(path)).home, undefined, 'home again: nothing left to keep');

  // The host now proposes A (its log's last route); then the user picks B: kept, and honoured by the process after.
  two.decide({ kind: 'request', agent: 'a1', proposed: A });
  two.decide({ kind: 'request', agent: 'a1', proposed: B });
  await two.settings.queue;
  assert.deepEqual([(await saved(path)).pick, (await saved(path)).home], [B, B]);
  const three = host(path, []);
  await three.load();
  three.track(agent);
  assert.equal(three.decide({ kind: 'request', agent: 'a1', proposed: B }).verdict.kind, 'pass');
});
