import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HealthStore } from '../health.js';
import { compileModule, Policy } from '../policy.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const quiet = { warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });

function host(path, audit = []) {
  const policy = new Policy(compiled, { chain: CHAIN, probes: false, providerThreshold: 0 }, quiet);
  return { policy, audit, store: new HealthStore(path, policy, (r) => audit.push(r)) };
}

const trip = (policy, now) => {
  policy.decide(now, { kind: 'request', agent: 'x', proposed: CHAIN[0] });
  policy.decide(now + 1, { kind: 'request-error', agent: 'x', provider: 'p', phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
};
const routeOf = (policy, now) => policy.decide(now, { kind: 'request', agent: `q${now}`, proposed: CHAIN[0] }).verdict;

test('two hosts sharing one file see each other\'s trips after one refresh', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'health-')), 'health.json');
  const one = host(path);
  const two = host(path);
  const now = Date.now();
  trip(one.policy, now);
  await one.store.save();

  assert.deepEqual(routeOf(two.policy, now + 10), { kind: 'pass' }, 'before the refresh, two does not know');
  await two.store.refresh();
  assert.deepEqual(routeOf(two.policy, now + 20), { kind: 'swap', provider: 'p', model: 'b' });
  assert.deepEqual(two.audit.map((a) => a.type), ['health-merged']);
});

test('a save merges what another host wrote first: nobody erases another\'s trip', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'health-')), 'health.json');
  const one = host(path);
  const two = host(path);
  const now = Date.now();
  trip(one.policy, now);
  await one.store.save();
  two.policy.decide(now + 5, { kind: 'request', agent: 'y', proposed: CHAIN[1] });
  two.policy.decide(now + 6, { kind: 'request-error', agent: 'y', provider: 'p', phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
  await two.store.save(); // without refreshing first

  const saved = JSON.parse(await readFile(path, 'utf8'));
  assert.deepEqual(saved.channels.map((c) => [c.channel.model, c.state]), [['a', 'open'], ['b', 'open']]);
});

test('a corrupt file is set aside, audited, and rebuilt on the next save', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'health-'));
  const path = join(dir, 'health.json');
  for (const [name, text] of [['not JSON', '{"channels": [tru'], ['a record the module rejects', '{"channels":[{"channel":{"provider":"p","model":"a"},"state":"ajar","failures":0,"openUntilMs":0,"lastCode":""}]}']]) {
    await writeFile(path, text);
    const h = host(path);
    await h.store.refresh();
    assert.equal(h.audit[0]?.type, 'health-set-aside', name);
    trip(h.policy, Date.now());
    await h.store.save();
    assert.equal(JSON.parse(await readFile(path, 'utf8')).channels[0].state, 'open', `${name}: rebuilt`);
  }
  assert.equal((await readdir(dir)).filter((f) => f.includes('.corrupt-')).length, 2, 'both bad files kept for inspection');
});

test('writes are atomic: no temp files are left behind', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'health-'));
  const h = host(join(dir, 'health.json'));
  trip(h.policy, Date.now());
  await Promise.all([h.store.save(), h.store.save(), h.store.save()]);
  assert.deepEqual(await readdir(dir), ['health.json']);
});
