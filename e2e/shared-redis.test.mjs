// Channel health shared through Redis (docs/state.md "Shared health across
// machines"): two real hosts with DIFFERENT DSH_HOMEs and different fake
// providers, sharing only a real redis-server. B runs a long task (a tool loop)
// while A trips a channel; B must avoid it within a second. Then Redis is
// killed mid-run: both keep answering on their local state, and when it
// returns they resync (a host that learnt a trip meanwhile teaches it to B).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, PRIMARY_PRO, ROOT, runHeadless, SECONDARY } from './harness.mjs';
import { addRedisClient, startRedis } from './redis/redis-server.mjs';

const CHAIN = [PRIMARY, SECONDARY, PRIMARY_PRO];
const TOOLS = join(ROOT, 'e2e/fixtures/flaky-tools');
const lookup = { kind: 'tool_call', name: 'lookup', arguments: { query: 'status' }, delayMs: 100 };
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

/** Waits for a condition; the bound only stops a hung test. */
async function until(what, cond, ms = 120_000) {
  const start = Date.now();
  while (!(await cond())) {
    if (Date.now() - start > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await pause(50);
  }
}

/** A home whose profile has the Redis client, as `dsh plugin add @redis/client` leaves it. */
async function redisHome(fp, url, { client = true, defaultModel, redis = {} } = {}) {
  const home = await makeHome({
    baseURL: fp.baseURL,
    defaultModel,
    // The open time outlasts the whole test (its three steps took minutes at load 20-40):
    // each step's routing rests on the trips of the steps before it.
    plugin: { chain: CHAIN, probes: false, providerThreshold: 0, cooldownMs: 1_200_000, shared: { redis: { url, keyPrefix: 'e2e:', ...redis } } },
    extraPlugins: [{ dir: TOOLS, id: 'flaky-tools', config: { tools: [{ name: 'lookup', script: [{ kind: 'ok', answer: 'fine' }] }] } }],
  });
  if (client) addRedisClient(join(home.dsh, 'profiles/headless'));
  return home;
}
const sharedAudit = (audit) => audit.filter((a) => a.type === 'shared-unavailable' || a.type === 'shared-restored').map((a) => a.type);

describe('hosts on two machines sharing health through Redis', () => {
  let redis, fpA, fpB;
  before(async () => {
    redis = await startRedis();
    fpA = await startFakeProvider({});
    fpB = await startFakeProvider({});
  });
  after(async () => {
    await redis.kill();
    await fpA.close();
    await fpB.close();
  });

  test('the default install has no Redis client; configuring Redis without it names the key', async (t) => {
    const home = await redisHome(fpA, redis.url, { client: false });
    t.after(home.cleanup);
    assert.ok(!existsSync(join(home.dsh, 'profiles/headless/node_modules/@redis')), 'dsh plugin add pulled in no client');
    const r = await runHeadless(home, 'Reply with OK');
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /config key "shared\.redis": needs the Redis client package @redis\/client/);
  });

  test('a shared.redis row the Redis client would refuse is refused at activation: the key named, no client error, no secret', async (t) => {
    // Each once stopped the boot with the client's own error and a 4.5 KB
    // stack naming no key, or (tls: false with rediss://) was ignored.
    const port = new URL(redis.url).port;
    for (const [row, key] of [
      [{ url: `redis://127.0.0.1:${port}`, tls: true }, 'shared.redis.tls'],
      [{ url: 'redis://127.0.0.1:99999' }, 'shared.redis.url'],
      [{ url: `redis://127.0.0.1:${port}/not-a-db` }, 'shared.redis.url'],
      [{ url: `redis://SECRET@127.0.0.1:${port}` }, 'shared.redis.url'],
    ]) {
      const home = await redisHome(fpA, row.url, { redis: row });
      t.after(home.cleanup);
      const r = await runHeadless(home, 'Reply with OK');
      assert.notEqual(r.code, 0, JSON.stringify(row));
      assert.match(r.stderr, new RegExp(`config key "${key.replaceAll('.', '\\.')}": `), JSON.stringify(row));
      // The host's boot wrapper prints its own frames for any plugin that
      // refuses its config; none of ours, and nothing of the Redis client's.
      assert.doesNotMatch(r.stderr, /shared-config\.js|shared-redis\.js|@redis|Invalid URL|ERR_/, `${JSON.stringify(row)}: no plugin or client stack`);
      assert.doesNotMatch(r.stderr + r.stdout, /SECRET/);
    }
  });

  test('a Redis URL the client cannot parse is refused at activation, with the client\'s reason, the URL not quoted', async (t) => {
    // Both once passed the check's own pattern: the host then ran with shared
    // health and the health file's refresh off, audited only as "Cannot read
    // properties of undefined (reading 'sendCommand')" (issue #34).
    for (const url of ['redis://[127.0.0.1]:6379', 'redis://[:::::]']) {
      const home = await redisHome(fpA, url);
      t.after(home.cleanup);
      const r = await runHeadless(home, 'Reply with OK');
      assert.notEqual(r.code, 0, url);
      assert.match(r.stderr, /config key "shared\.redis\.url": the Redis client cannot parse it \(Invalid URL\)/, url);
      assert.doesNotMatch(r.stderr, /shared-config\.js|shared-redis\.js|sendCommand|\[127\.0\.0\.1\]|\[:::::\]/, `${url}: no stack, no URL`);
    }
  });

  test('a trip in one host is pushed to the other, which avoids it; Redis killed, both go on, then resync', async (t) => {
    fpA.reset();
    fpB.reset();
    const homeA = await redisHome(fpA, redis.url, { defaultModel: `${SECONDARY.provider}/${SECONDARY.model}` });
    const homeB = await redisHome(fpB, redis.url);
    t.after(() => Promise.all([homeA.cleanup(), homeB.cleanup()]));
    const name = (c) => `${c.provider}/${c.model}`; // audit records carry channels as {provider, model}
    const flash = `${PRIMARY.provider}/${PRIMARY.model}`;
    const mockB = `${SECONDARY.provider}/${SECONDARY.model}`;
    const pro = `${PRIMARY_PRO.provider}/${PRIMARY_PRO.model}`;

    // ---- 1. B works in a loop on the primary. A, on another machine, finds the
    // secondary spent. When B's primary then fails, B skips the secondary it
    // never tried itself.
    fpB.script(PRIMARY.model, [lookup]);
    fpB.script(PRIMARY_PRO.model, [{ kind: 'success', text: 'B done' }]);
    fpA.script(SECONDARY.model, ['insufficient_balance']);
    fpA.script(PRIMARY.model, [{ kind: 'success', text: 'A done' }]);
    const b = runHeadless(homeB, 'Look up the status until it is fine', { timeoutMs: 300_000 });
    await until('B is in its loop on the primary', () => (fpB.counts()[PRIMARY.model] ?? 0) >= 2);
    const a = await runHeadless(homeA, 'Reply with OK');
    assert.equal(a.stdout.trim(), 'A done', a.stderr);
    const tripped = (await auditRecords(homeA)).find((x) => x.type === 'circuit-open' && name(x.channel) === mockB);
    await until('B heard of it', async () => (await auditRecords(homeB)).some((x) => x.type === 'shared-merged'));
    const heardMs = Date.parse((await auditRecords(homeB)).find((x) => x.type === 'shared-merged').at) - Date.parse(tripped.at);
    fpB.script(PRIMARY.model, ['insufficient_balance']);
    const rb = await b;
    assert.equal(rb.stdout.trim(), 'B done', rb.stderr);
    const failover = (await auditRecords(homeB)).find((x) => x.type === 'failover');
    t.diagnostic(`A tripped ${mockB}; B heard it ${heardMs} ms later (B's audit); B failed over ${Date.parse(failover.at) - Date.parse(tripped.at)} ms after the trip, to ${name(failover.to)}`);
    // The homes share no file, so only Redis's push can have told B; the proof is that B
    // then skipped the channel (below). How long the push took is load, so it is reported
    // (above), not bounded: at load 20-40 it passed the 1 s this test once asserted.
    assert.deepEqual([name(failover.from), name(failover.to)], [flash, pro], 'B skipped the channel A found spent');
    assert.equal(fpB.counts()[SECONDARY.model] ?? 0, 0, 'B never asked it');

    // ---- 2. B works on (on pro now: its own file says the others are down).
    // Redis is killed mid-run. A, started during the outage, decides on its own
    // file and learns one more trip (the primary).
    fpA.reset();
    fpB.reset();
    fpB.script(PRIMARY_PRO.model, [lookup]);
    const b2 = runHeadless(homeB, 'Look up the status until it is fine', { timeoutMs: 300_000 });
    await until('B2 is in its loop on pro', () => (fpB.counts()[PRIMARY_PRO.model] ?? 0) >= 2);
    await redis.kill();
    const killedAt = Date.now();
    fpA.script(PRIMARY.model, ['insufficient_balance']);
    fpA.script(PRIMARY_PRO.model, [{ kind: 'success', text: 'A answered without Redis' }]);
    const a2 = await runHeadless(homeA, 'Reply with OK');
    assert.equal(a2.stdout.trim(), 'A answered without Redis', a2.stderr);
    assert.equal(fpA.counts()[SECONDARY.model] ?? 0, 0, 'A decided on its local state');
    await until('B kept answering with Redis away', () => fpB.requests.filter((r) => r.at > killedAt).length >= 2);

    // ---- 3. Redis returns, empty. B reconnects and writes what it knows; A,
    // started again, reads it and writes what it learnt during the outage; B
    // hears that at once.
    await redis.start();
    await until('B reconnected', async () => sharedAudit(await auditRecords(homeB)).includes('shared-restored'));
    const mergedBefore = (await auditRecords(homeB)).filter((x) => x.type === 'shared-merged').length;
    fpA.script(PRIMARY_PRO.model, [{ kind: 'success', text: 'A3 done' }]);
    const a3 = await runHeadless(homeA, 'Reply with OK');
    assert.equal(a3.stdout.trim(), 'A3 done', a3.stderr);
    await until('B heard what A learnt during the outage', async () => (await auditRecords(homeB)).filter((x) => x.type === 'shared-merged').length > mergedBefore);
    fpB.script(PRIMARY_PRO.model, [{ kind: 'success', text: 'B2 done' }]);
    const rb2 = await b2;
    assert.equal(rb2.stdout.trim(), 'B2 done', rb2.stderr);

    const healthOf = async (home) => Object.fromEntries(JSON.parse(await readFile(join(home.dsh, 'dsh-resilience/health.json'), 'utf8'))
      .channels.map((c) => [`${c.channel.provider}/${c.channel.model}`, c]));
    const [ha, hb] = [await healthOf(homeA), await healthOf(homeB)];
    assert.equal(hb[flash].changedAtMs, ha[flash].changedAtMs, 'A\'s outage-time trip of the primary reached B after Redis returned');
    assert.equal(hb[mockB].changedAtMs, ha[mockB].changedAtMs);
    const auditB = await auditRecords(homeB);
    assert.deepEqual(sharedAudit(auditB.slice(auditB.findLastIndex((x) => x.type === 'boot'))), ['shared-unavailable', 'shared-restored'], 'B2: once per outage, once restored');
    const auditA = await auditRecords(homeA);
    const boots = auditA.flatMap((x, i) => (x.type === 'boot' ? [i] : []));
    assert.deepEqual(sharedAudit(auditA.slice(boots[1], boots[2])), ['shared-unavailable'], 'A2 said once that Redis was away');
    assert.deepEqual(sharedAudit(auditA.slice(boots[2])), [], 'A3 found it back');
  });

  test('an exhaustion mark survives a host restart and reaches a second host through Redis, with no marks file', async (t) => {
    fpA.reset();
    fpB.reset();
    const plugin = { pools: [{ name: 'main', routes: [PRIMARY, SECONDARY] }], probes: false, shared: { redis: { url: redis.url, keyPrefix: 'e2e-marks:' } } };
    const home = async (fp, defaultModel) => {
      const h = await makeHome({ baseURL: fp.baseURL, defaultModel, plugin,
        extraPlugins: [{ dir: TOOLS, id: 'flaky-tools', config: { tools: [{ name: 'lookup', script: [{ kind: 'ok', answer: 'fine' }] }] } }] });
      addRedisClient(join(h.dsh, 'profiles/headless'));
      return h;
    };
    const homeA = await home(fpA);
    const homeB = await home(fpB, 'mock/mock-a'); // mock-a is in no pool: B's first run never asks the marked provider
    t.after(() => Promise.all([homeA.cleanup(), homeB.cleanup()]));
    const markIn = async (h) => {
      const text = await readFile(join(h.dsh, 'dsh-resilience/health.json'), 'utf8').catch(() => '{"channels":[]}');
      return JSON.parse(text).channels.find((c) => c.channel.provider === PRIMARY.provider && c.channel.model === '*' && c.markedAtMs > 0);
    };

    // A spends the primary's allowance: the provider is marked, the turn goes on on the secondary.
    fpA.script(PRIMARY.model, ['insufficient_balance']);
    fpA.script(SECONDARY.model, [{ kind: 'success', text: 'A on the secondary' }]);
    const a = await runHeadless(homeA, 'Reply with OK');
    assert.equal(a.stdout.trim(), 'A on the secondary', a.stderr);
    const mark = await markIn(homeA);
    assert.ok(mark, 'the mark is in A\'s health.json, in the provider\'s record');
    assert.deepEqual((await readdir(join(homeA.dsh, 'dsh-resilience'))).filter((f) => f.startsWith('quota-marks')), [], 'no marks file');

    // A restarts: the new session starts on the secondary without asking the primary again.
    fpA.script(SECONDARY.model, [{ kind: 'success', text: 'A again' }]);
    const a2 = await runHeadless(homeA, 'Reply with OK');
    assert.equal(a2.stdout.trim(), 'A again', a2.stderr);
    assert.equal(fpA.counts()[PRIMARY.model], 1, 'the restarted host kept the mark');

    // B shares no file with A, only Redis. It works on mock-a until it has heard of the mark.
    fpB.script('mock-a', [lookup]);
    const b = runHeadless(homeB, 'Look up the status until it is fine', { timeoutMs: 300_000 });
    await until('B took the mark from Redis', async () => (await markIn(homeB))?.markedAtMs === mark.markedAtMs);
    fpB.script('mock-a', [{ kind: 'success', text: 'B done' }]);
    const rb = await b;
    assert.equal(rb.stdout.trim(), 'B done', rb.stderr);

    // B's next session would start on the primary: the mark it learnt keeps it on the secondary.
    const settings = join(homeB.dsh, 'settings.yaml');
    await writeFile(settings, (await readFile(settings, 'utf8'))
      .replace('agent-default-model:\n  provider: mock\n  model: mock-a', `agent-default-model:\n  provider: ${PRIMARY.provider}\n  model: ${PRIMARY.model}`));
    fpB.script(SECONDARY.model, [{ kind: 'success', text: 'B on the secondary' }]);
    const rb2 = await runHeadless(homeB, 'Reply with OK');
    assert.equal(rb2.stdout.trim(), 'B on the secondary', rb2.stderr);
    assert.equal(fpB.counts()[PRIMARY.model] ?? 0, 0, 'B never asked the provider A found spent');
  });
});
