// SharedHealth against a real redis-server (e2e/redis/redis-server.mjs): two
// policy modules, as two hosts on different machines, sharing only Redis.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileModule, Engine as Policy } from '../engine.js';
import { loadRedisClient, SharedHealth } from '../shared-redis.js';
import { clientLoader, startRedis } from '../../e2e/redis/redis-server.mjs';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }, { provider: 'q', model: 'c' }];
const quiet = { warn() {} };
const DAY = 86_400_000;
let compiled, redis, createClient;
before(async () => {
  compiled = await compileModule();
  redis = await startRedis();
  createClient = await loadRedisClient(clientLoader());
});
after(() => redis.kill());

let prefixes = 0;
/** One host: a policy module, its shared store, its audit lines. */
async function host(prefix, { start = true } = {}) {
  const policy = new Policy(compiled, { chain: CHAIN, probes: false, providerThreshold: 0 }, quiet);
  const audit = [];
  const merges = []; // whether each merge was live (published) or a read of what Redis holds
  const shared = new SharedHealth({
    options: { url: redis.url, keyPrefix: prefix }, createClient,
    due: (forget) => policy.sharedWrites(forget),
    written: (records) => policy.sharedWritten(records),
    merge: (records, live) => {
      merges.push(live);
      const r = policy.restore(JSON.stringify({ channels: records }), undefined, { live, fromShared: true });
      if (r.adopted > 0) audit.push({ type: 'shared-merged', adopted: r.adopted });
    },
    audit: (r) => audit.push(r),
  });
  if (start) await shared.start();
  return { policy, shared, audit, merges };
}
const newPrefix = () => `t${process.pid}-${++prefixes}:`;
const trip = (policy, now, channel = CHAIN[0], agent = 'x') => {
  policy.decide(now, { kind: 'request', agent, proposed: channel });
  policy.decide(now + 1, { kind: 'request-error', agent, provider: channel.provider, phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
};
const stateOf = (policy, model) => policy.snapshot().channels.find((c) => c.channel.model === model)?.state;
async function until(what, cond, ms = 3_000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  return Date.now() - start;
}
const raw = async (args) => {
  const c = createClient({ url: redis.url });
  await c.connect();
  try { return await c.sendCommand(args); } finally { c.destroy(); }
};

test('a trip in one host reaches the other at once through pub/sub', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  const two = await host(prefix);
  t.after(() => Promise.all([one.shared.close(), two.shared.close()]));
  trip(one.policy, Date.now());
  one.shared.sync();
  const ms = await until('two hears of the trip', () => stateOf(two.policy, 'a') === 'open', 1_000);
  t.diagnostic(`heard after ${ms} ms`);
  assert.deepEqual(two.audit.map((a) => a.type), ['shared-merged']);
  // One hash per provider, a field per model, expiring with its state.
  assert.deepEqual((await raw(['HKEYS', `${prefix}health:p`])).map(String), ['a']);
  const ttl = Number(await raw(['PTTL', `${prefix}health:p`]));
  const SKEW = 180_000; // maxClockSkewMs: kept until every host's clock finds it past the horizon (policy/persist.go)
  assert.ok(ttl > DAY + SKEW - 60_000 && ttl <= DAY + SKEW + 120_000, `expires with its state: ${ttl}`);
});

test('what Redis holds is the module\'s: a rebuilt or reconfigured instance neither forgets it nor writes it again', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  t.after(() => one.shared.close());
  trip(one.policy, Date.now());
  one.shared.sync();
  await one.shared.flush();
  assert.equal(one.shared.writes, 1);
  assert.deepEqual(one.policy.sharedWrites(false), [], 'written: Redis holds it');
  one.policy.rebuild(); // as after a trap
  assert.deepEqual(one.policy.sharedWrites(false), [], 'a rebuilt instance knows it');
  one.policy.reconfigure({ chain: CHAIN, probes: false, providerThreshold: 0, cooldownMs: 45_000 });
  assert.deepEqual(one.policy.sharedWrites(false), [], 'so does a reconfigured one');
  assert.equal(one.policy.sharedWrites(true).length, 1, 'after an outage it is due again');
});

test('a host that starts reads the current state first', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  trip(one.policy, Date.now(), CHAIN[2]);
  await one.shared.close(); // its last write goes out before it lets go
  const late = await host(prefix);
  t.after(() => late.shared.close());
  assert.equal(stateOf(late.policy, 'c'), 'open', 'known before its first request');
});

test('a trip published by a host 10 min behind holds the other for its open time from receipt', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  const two = await host(prefix);
  t.after(() => Promise.all([one.shared.close(), two.shared.close()]));
  trip(one.policy, Date.now() - 600_000); // one's clock is 10 min behind
  const sent = Date.now();
  one.shared.sync();
  await until('two hears of the trip', () => stateOf(two.policy, 'a') === 'open', 1_000);
  const rec = (policy) => policy.snapshot().channels.find((c) => c.channel.model === 'a');
  const [w, r] = [rec(one.policy), rec(two.policy)];
  // Read by one's clock the open would be 10 min over: two would use the channel at once.
  assert.ok(r.changedAtMs >= sent && r.openUntilMs - r.changedAtMs === w.openUntilMs - w.changedAtMs,
    `two holds it from its receipt for one's open time: ${JSON.stringify({ w, r, sent })}`);
  assert.ok(two.merges.includes(true), 'the published record was merged as news');
});

test('a read of what Redis holds is not news: records keep their writers\' times', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  trip(one.policy, Date.now() - 600_000, CHAIN[2]);
  await one.shared.close();
  const late = await host(prefix);
  t.after(() => late.shared.close());
  assert.deepEqual(late.merges, [false]);
  const r = late.policy.snapshot().channels.find((c) => c.channel.model === 'c');
  assert.ok(r.openUntilMs < Date.now(), `a 10-min-old open read at start is over: ${JSON.stringify(r)}`);
});

test('the merge is field-level and newest-wins, in Redis', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  const two = await host(prefix);
  t.after(() => Promise.all([one.shared.close(), two.shared.close()]));
  const now = Date.now();
  trip(one.policy, now + 100, CHAIN[0]); // newer trip of a
  trip(two.policy, now, CHAIN[0], 'y'); // older trip of a, written last
  trip(two.policy, now, CHAIN[1], 'z'); // b, only two knows
  one.shared.sync();
  await one.shared.flush();
  two.shared.sync();
  await two.shared.flush();
  const stored = {};
  for (const v of await raw(['HVALS', `${prefix}health:p`])) {
    const r = JSON.parse(String(v));
    stored[r.channel.model] = r;
  }
  assert.equal(stored.a.changedAtMs, now + 101, 'the older record did not replace the newer');
  assert.equal(stored.b.state, 'open', 'the other field of the same hash was taken');
});

test('Redis away: decisions go on, writes wait, the outage is audited once, and it all resyncs', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  const two = await host(prefix);
  t.after(() => Promise.all([one.shared.close(), two.shared.close()]));
  await redis.kill();
  const now = Date.now();
  trip(one.policy, now, CHAIN[1]);
  const started = performance.now();
  one.shared.sync(); // returns at once: nothing waits on Redis
  assert.ok(performance.now() - started < 50);
  assert.deepEqual(one.policy.decide(now + 10, { kind: 'request', agent: 'k', proposed: CHAIN[1] }).verdict,
    { kind: 'swap', provider: 'p', model: 'a' }, 'the local state decides');
  await until('both notice the outage', () => [one, two].every((h) => h.audit.some((a) => a.type === 'shared-unavailable')));
  trip(one.policy, now + 50, CHAIN[2]);
  one.shared.sync();
  await new Promise((r) => setTimeout(r, 300));

  await redis.start(); // back, and empty: it kept nothing
  await until('one writes what it learnt meanwhile, and two hears it', () => stateOf(two.policy, 'c') === 'open' && stateOf(two.policy, 'b') === 'open', 15_000);
  // Each client reconnects on its own jittered schedule: two's subscriber can
  // bring the news before two's main connection is back and audits the end.
  await until('both audit the end of the outage', () => [one, two].every((h) => h.audit.some((a) => a.type === 'shared-restored')), 15_000);
  for (const h of [one, two]) {
    const types = h.audit.map((a) => a.type).filter((x) => x.startsWith('shared-') && x !== 'shared-merged');
    assert.deepEqual(types, ['shared-unavailable', 'shared-restored'], 'once per outage, once restored');
  }
  assert.ok(Number(await raw(['HLEN', `${prefix}health:p`])) >= 1, 'Redis was refilled');
});

test('Redis slow: nothing waits on it, and the write lands when it answers', async (t) => {
  const prefix = newPrefix();
  const one = await host(prefix);
  const two = await host(prefix);
  t.after(() => Promise.all([one.shared.close(), two.shared.close()]));
  const blocker = createClient({ url: redis.url });
  await blocker.connect();
  const sleeping = blocker.sendCommand(['DEBUG', 'SLEEP', '3']).finally(() => blocker.destroy()); // the server answers nobody meanwhile
  await new Promise((r) => setTimeout(r, 100));
  const now = Date.now();
  const started = performance.now();
  trip(one.policy, now);
  one.shared.sync();
  const verdict = one.policy.decide(now + 10, { kind: 'request', agent: 'k', proposed: CHAIN[0] }).verdict;
  assert.ok(performance.now() - started < 1_500, 'the trip and the next decision did not wait out the 3 s Redis was asleep');
  assert.deepEqual(verdict, { kind: 'swap', provider: 'p', model: 'b' });
  await sleeping;
  await until('two hears it once Redis answers', () => stateOf(two.policy, 'a') === 'open', 5_000);
});

test('without the client package, activation names the key and how to add it', async () => {
  const missing = () => Promise.reject(Object.assign(new Error("Cannot find package '@redis/client'"), { code: 'ERR_MODULE_NOT_FOUND' }));
  await assert.rejects(loadRedisClient(missing), /config key "shared\.redis": needs the Redis client package @redis\/client.*dsh plugin --profile <profile> add @redis\/client/);
});
