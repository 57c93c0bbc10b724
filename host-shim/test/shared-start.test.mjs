// Two processes of one home (one state dir, one health file), each with
// shared.redis configured, as lifetime.js brings them up: whatever the
// shared start does (a URL the Redis client cannot parse, a Redis that does
// not answer, a start that throws), each hears the other's trips through the
// file's refresh, and the audit says why Redis is not shared. A client that
// could not parse the URL once left the refresh off: a trip in one process
// reached the other only at its stop, audited as `Cannot read properties of
// undefined (reading 'sendCommand')`.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModule, Engine } from '../engine.js';
import { HealthStore } from '../health.js';
import { Lifetime } from '../lifetime.js';
import * as sharedRedis from '../shared-redis.js';
import { clientLoader } from '../../e2e/redis/redis-server.mjs';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const POLICY = { chain: CHAIN, probes: false, providerThreshold: 0, cooldownMs: 600_000 };
const quiet = { warn() {} };
let compiled, createClient;
before(async () => {
  compiled = await compileModule();
  createClient = await sharedRedis.loadRedisClient(clientLoader());
});

/** A port on 127.0.0.1 where nothing listens. */
async function closedPort() {
  const srv = createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

async function until(what, cond, ms = 20_000) {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** One host process: its lifetime brought up over the home's state dir, Redis configured as given. */
function process_(stateDir, redis, shared = sharedRedis) {
  const audit = [];
  const report = (r) => audit.push(r);
  const life = new Lifetime({ stateDir, configJson: JSON.stringify(POLICY), compiled });
  const engine = new Engine(life.compiling, POLICY, quiet, report);
  const health = new HealthStore(join(stateDir, 'health.json'), engine, report);
  const shell = { shared: undefined, healthChanged() {} };
  life.begin({
    ctx: /** @type {any} */ ({ get() {}, inject() {} }), engine, step: (e) => engine.step(e), report, logger: quiet,
    facts: Promise.all([health.peek(), undefined]), health, quota: /** @type {any} */ ({ agentEvents: () => [] }), shell: /** @type {any} */ (shell),
    coldStart: /** @type {any} */ ({ allows: async () => false }), sharedConfig: { redis: { keyPrefix: 'k:', tls: false, ...redis } },
    sharedRedis: shared, createRedisClient: createClient, refreshMs: 100, booted: async () => {},
  });
  return { life, engine, health, audit, shell, end: async () => { await life.end(); await life.shared?.close(0); await health.close(); } };
}

const stateOf = (engine, model) => engine.snapshot()?.channels.find((c) => c.channel.model === model)?.state;
const trip = (engine, channel = CHAIN[0]) => {
  const now = Date.now();
  engine.decide(now, { kind: 'request', agent: 'x', proposed: channel });
  engine.decide(now + 1, { kind: 'request-error', agent: 'x', provider: channel.provider, phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
};

const throwingStart = { ...sharedRedis, SharedHealth: class extends sharedRedis.SharedHealth { async start() { throw new Error('no socket today'); } } };

for (const [name, redis, shared, why] of [
  ['a URL the Redis client cannot parse', { url: 'redis://[127.0.0.1]:6379' }, sharedRedis, /the Redis client refused shared\.redis \(Invalid URL\); health is shared through the local file only/],
  ['another it cannot parse', { url: 'redis://[:::::]' }, sharedRedis, /the Redis client refused shared\.redis \(Invalid URL\)/],
  ['a Redis that does not answer', { url: `redis://127.0.0.1:${await closedPort()}` }, sharedRedis, /ECONNREFUSED|no answer/],
  ['a shared start that throws', { url: 'redis://127.0.0.1:6379' }, throwingStart, /shared health did not start \(no socket today\); health is shared through the local file only/],
]) {
  test(`two processes of one home hear each other's trips through the file with ${name}`, async (t) => {
    const stateDir = await mkdtemp(join(tmpdir(), 'shared-start-'));
    const one = process_(stateDir, redis, shared);
    const two = process_(stateDir, redis, shared);
    t.after(() => Promise.all([one.end(), two.end()]));
    await Promise.all([one.life.whenUp(), two.life.whenUp()]);
    await Promise.allSettled([one.life.behind, two.life.behind]); // what follows the bring-up has run

    trip(one.engine);
    assert.equal(stateOf(one.engine, 'a'), 'open');
    await one.health.save();
    await until('two heard of one\'s trip through the file', () => stateOf(two.engine, 'a') === 'open');
    // And back: the refresh runs in both.
    trip(two.engine, CHAIN[1]);
    await two.health.save();
    await until('one heard of two\'s trip through the file', () => stateOf(one.engine, 'b') === 'open');

    for (const p of [one, two]) {
      const said = p.audit.filter((r) => r.type === 'shared-unavailable');
      assert.equal(said.length, 1, `said once: ${JSON.stringify(p.audit.filter((r) => r.type?.startsWith('shared')))}`);
      assert.match(said[0].reason, why);
      assert.doesNotMatch(said[0].reason, /sendCommand|\[127\.0\.0\.1\]|\[:::::\]/, 'the reason, not a later crash, and not the URL');
    }
  });
}
