// The Lua merge Redis runs (shared-redis.js MERGE) keeps the record the
// module's merge order keeps (policy/merge.go remoteWins): every pair of a
// set of records that differ in each field the order reads, written one over
// the other in a real redis-server, against what the module notes as the
// store's after a read of the first and a write of the second.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { compileModule, Engine as Policy } from '../engine.js';
import { loadRedisClient, MERGE } from '../shared-redis.js';
import { clientLoader, startRedis } from '../../e2e/redis/redis-server.mjs';

let compiled, redis, client;
before(async () => {
  compiled = await compileModule();
  redis = await startRedis();
  const createClient = await loadRedisClient(clientLoader());
  client = createClient({ url: redis.url });
  await client.connect();
});
after(() => {
  client?.destroy();
  redis?.kill();
});

/** Records of one channel, differing in version, state, opens, failures and open end. */
function records(model) {
  const out = [];
  for (const version of [1, 2]) {
    for (const state of ['closed', 'open', 'half-open']) {
      for (const opens of [0, 1]) {
        for (const failures of [0, 2]) {
          for (const openUntilMs of state === 'closed' ? [0] : [1_000, 2_000]) {
            out.push({ channel: { provider: 'p', model }, state, failures, opens, openUntilMs, lastCode: 'SERVER', changedAtMs: 500, version });
          }
        }
      }
    }
  }
  return out;
}

test('Redis keeps the record the module keeps, for every pair written one over the other', async () => {
  const policy = new Policy(compiled, { chain: [{ provider: 'p', model: 'seed' }], probes: false }, { warn() {} });
  await policy.start();
  const key = `merge-${process.pid}:health:p`;
  let pairs = 0;
  const set = records('m');
  for (const [i, held] of set.entries()) {
    // One channel per pair: the store read holding the first record, then the second written.
    const pair = set.map((written, j) => {
      const channel = { provider: 'p', model: `m${i}-${j}` };
      return [{ ...held, channel }, { ...written, channel }];
    });
    policy.restore(JSON.stringify({ channels: pair.map(([h]) => h) }), 10_000, { fromShared: true });
    policy.sharedWritten(pair.map(([, w]) => w));
    const byModule = new Map((policy.snapshot()?.shared ?? []).map((r) => [r.channel.model, r]));
    for (const [h, w] of pair) {
      const model = h.channel.model;
      await client.sendCommand(['HSET', key, model, JSON.stringify(h)]);
      await client.sendCommand(['EVAL', MERGE, '1', key, model, JSON.stringify(w), '0', String(Date.now() + 60_000), `merge-${process.pid}:health`]);
      const byRedis = JSON.parse(String(await client.sendCommand(['HGET', key, model])));
      assert.deepEqual(byRedis, byModule.get(model), `held ${JSON.stringify(h)}, written ${JSON.stringify(w)}`);
      pairs++;
    }
  }
  assert.ok(pairs > 500, `${pairs} pairs`);
});
