// The composition root (index.js) under a fake Cordis context: activation,
// a trap and its recovery, a live reconfigure, and dispose, each through the
// host's seams only (listeners, commands, the audit log), no real host.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { apply } from '../index.js';
import { compileModule } from '../engine.js';
import { firstRunWord } from '../cold-start.js';
import { firstRunStateDir, usedStateDir } from './state-dirs.mjs';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const FAULT = fileURLToPath(new URL('../../build/dsh-resilience-fault.wasm', import.meta.url));
const faultCompiled = readFile(FAULT).then((b) => WebAssembly.compile(b));

/** A Cordis-shaped context that owns its disposers, as the host's does. */
function fakeContext(more = {}) {
  const listeners = new Map(); // event -> listener
  const commands = new Map(); // name -> command
  const provided = new Map();
  const disposers = [];
  const injected = []; // what each inject callback returned: Cordis awaits them at disposal
  const effect = (fn) => { disposers.push(fn()); };
  const services = { commands: { register: (c) => { commands.set(c.name, c); return () => commands.delete(c.name); } }, ...more };
  const ctx = {
    logger: () => ({ warn() {}, info() {} }),
    on: (name, fn) => { listeners.set(name, fn); },
    emit() {},
    get: (name) => services[name],
    inject(names, fn) {
      if (names.every((n) => services[n])) injected.push(fn({ ...services, on() {}, effect }));
    },
    effect,
    provide: (name, value) => { provided.set(name, value); },
    async dispose() {
      for (const d of disposers.reverse()) await d?.();
      disposers.length = 0;
      await Promise.all(injected.splice(0));
    },
  };
  return { ctx, listeners, commands, provided };
}

const agent = { id: 'a1', session: { id: 's1' } };
const request = (listeners, proposed = CHAIN[0]) => listeners.get('agent/request')({ agent }, async () => ({ ...proposed }));
const failure = (code) => ({ agent, provider: 'p', failure: { code, message: 'Insufficient Balance', status: 402 } });
const auditOf = async (dir) => (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
const table = async (commands) => (await commands.get('resilience').handler({ agent, rawInput: '' })).text;

test('activation: apply returns before the bring-up, and the first request awaits it', async (t) => {
  const dir = await usedStateDir('index-');
  const { ctx, listeners, commands, provided } = fakeContext();
  t.after(() => ctx.dispose());
  let parts;
  const returned = await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  assert.equal(returned, undefined, 'Cordis would take a returned value for an effect');
  const { engine, up } = parts;
  assert.ok(listeners.has('agent/request') && listeners.has('agent/request-error') && listeners.has('tools/execute'));
  assert.ok(commands.has('resilience') && commands.has('quota-retry'));
  assert.ok(provided.has('llmQuotaRetry'));

  const routed = await request(listeners); // may come before the module is up: it waits
  assert.deepEqual(routed, CHAIN[0]);
  await up;
  assert.equal(engine.up, true);
  await ctx.dispose();
  const audit = await auditOf(dir);
  assert.equal(audit.filter((r) => r.type === 'boot').length, 1);
  assert.ok(audit.some((r) => r.type === 'input' && r.export === 'decide' && r.event.kind === 'request'), 'the request was decided');
});

test('model info is asked once the host has loaded every plugin: a provider registered late is not taken for unroutable', async (t) => {
  const dir = await usedStateDir('index-');
  // The chain's second provider registers its adapter in its own plugin's
  // activation, after the module is up: asked before that, the host answers NO_ADAPTER.
  const registered = new Set(['p']);
  const asked = [];
  const llm = {
    resolveModelInfo: async (provider, model) => {
      asked.push(`${provider}/${model}`);
      if (!registered.has(provider)) throw Object.assign(new Error(`no adapter for ${provider}`), { code: 'NO_ADAPTER' });
      return { context: { contextWindow: 128000 } };
    },
  };
  let loaded;
  const loader = { await: () => new Promise((resolve) => { loaded = resolve; }) };
  const chain = [{ provider: 'late', model: 'x' }, ...CHAIN];
  const { ctx, listeners } = fakeContext({ llm, loader });
  t.after(() => ctx.dispose());
  let parts;
  await apply(ctx, { chain, probes: false, stateDir: dir }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  await parts.up;
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(asked, [], 'nothing asked while the host is still loading plugins');
  registered.add('late');
  loaded();
  while (asked.length < chain.length) await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
  assert.deepEqual(await request(listeners, chain[0]), chain[0], 'the late provider is routable: the request goes where it was sent');
  await ctx.dispose();
  assert.ok(!(await auditOf(dir)).some((r) => r.type === 'unroutable'), 'no target was taken for unroutable');
});

test('a bad config ends the first request naming the key, in a first run too (no request goes cold); apply itself does not fail', async (t) => {
  for (const dir of [await usedStateDir('index-'), await firstRunStateDir('index-')]) {
    const { ctx, listeners } = fakeContext();
    t.after(() => ctx.dispose());
    await apply(ctx, { chain: CHAIN, failureThreshold: -1, stateDir: dir }, { compile: compileModule });
    // The listener throws instead of answering a route: the host sends nothing.
    await assert.rejects(request(listeners), /config key "failureThreshold"/);
  }
});

test('activation brings the health file, the backup and the breakers up in one sequence', async (t) => {
  const dir = await usedStateDir('index-');
  const now = Date.now();
  await writeFile(join(dir, 'health.json'), JSON.stringify({ channels: [{ channel: CHAIN[0], state: 'open', failures: 3,
    opens: 1, openUntilMs: now + 3_600_000, lastCode: 'SERVER', changedAtMs: now - 10 }] }));
  await writeFile(join(dir, 'backup.json'), JSON.stringify({ channel: { provider: 'q', model: 'z' }, v: 1 }));
  const { ctx, listeners } = fakeContext();
  t.after(() => ctx.dispose());
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compiled: compileModule() });
  // The primary is open from the file; the user's backup comes first.
  assert.deepEqual(await request(listeners), { provider: 'q', model: 'z' });
  await ctx.dispose();
  const merged = (await auditOf(dir)).find((r) => r.type === 'health-merged');
  assert.deepEqual([merged?.adopted, merged?.of], [1, 1]);
});

test('a trap fails the request open and the engine recovers with the same bring-up (health kept)', async (t) => {
  const dir = await usedStateDir('index-');
  const now = Date.now();
  await writeFile(join(dir, 'health.json'), JSON.stringify({ channels: [{ channel: CHAIN[0], state: 'open', failures: 3,
    opens: 1, openUntilMs: now + 3_600_000, lastCode: 'SERVER', changedAtMs: now - 10 }] }));
  const { ctx, listeners, commands } = fakeContext();
  t.after(() => ctx.dispose());
  let parts;
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compiled: faultCompiled, expose: (p) => { parts = p; } });
  const { engine, up } = parts;
  await up;
  const before = engine.instance;

  assert.deepEqual(await request(listeners), CHAIN[0], 'the trap fails open: the host\'s own route');
  assert.notEqual(engine.instance, before, 'a new instance');
  assert.match(await table(commands), /p\/a\s+open/, 'the recovered instance knows the primary is open');
  await ctx.dispose();
  const audit = await auditOf(dir);
  assert.ok(audit.some((r) => r.type === 'module-failure' && r.error === 'TrapError' && r.what === 'request'));
  assert.ok(audit.some((r) => r.type === 'input' && r.export === 'configure' && r.rebuild === true), 'the recovery is recorded for the replay');
  assert.deepEqual(audit.at(-1).moduleFailures, { 'TrapError:request': 1 });
});

test('a live reconfigure keeps channel health and the backup; a refused one changes nothing', async (t) => {
  const dir = await usedStateDir('index-');
  const { ctx, listeners, commands } = fakeContext();
  t.after(() => ctx.dispose());
  let parts;
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir, failureThreshold: 1 }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  const { engine, up, reconfigure } = parts;
  await up;
  await request(listeners);
  const handed = await listeners.get('agent/request-error')(failure('QUOTA'), async () => undefined);
  assert.deepEqual(handed, { kind: 'retry' }, 'failed over to the secondary');
  assert.match(await table(commands), /p\/a\s+open/);
  const backup = await commands.get('resilience').handler({ agent, rawInput: 'backup q/z' });
  assert.equal(backup.kind, 'success');

  reconfigure({ chain: CHAIN, probes: false, failureThreshold: 2, cooldownMs: 120_000 });
  assert.equal(engine.resolved.failureThreshold, 2);
  assert.equal(engine.resolved.cooldownMs, 120_000);
  assert.match(await table(commands), /p\/a\s+open/, 'the breaker survived');
  assert.deepEqual(await request(listeners), { provider: 'q', model: 'z' }, 'the backup survived');

  assert.throws(() => reconfigure({ chain: CHAIN, failureThreshold: -1 }), /config key "failureThreshold"/);
  assert.equal(engine.resolved.failureThreshold, 2, 'a refused config changes nothing');
});

test('dispose ends the engine, unregisters what it registered, and stop is the last record', async () => {
  const dir = await usedStateDir('index-');
  const { ctx, listeners, commands } = fakeContext();
  let parts;
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  const { engine } = parts;
  await request(listeners);
  await ctx.dispose();
  assert.equal(commands.size, 0, 'the commands were unregistered');
  assert.equal(engine.step({ kind: 'wake' }), undefined, 'no step after dispose');
  const audit = await auditOf(dir);
  assert.equal(audit.at(-1).type, 'stop');
  assert.equal(audit.filter((r) => r.type === 'stop').length, 1);
});

test('dispose during the bring-up waits for it, and nothing is written after stop', async () => {
  const dir = await usedStateDir('index-');
  const { ctx } = fakeContext();
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compiled: compileModule() });
  await ctx.dispose(); // at once: the module may still be compiling
  const audit = await auditOf(dir);
  assert.equal(audit.at(-1).type, 'stop', audit.map((r) => r.type).join(' '));
});

test('an older version\'s quota-marks.json is folded into health in the bring-up: the first request already keeps off the marked provider', async (t) => {
  const dir = await usedStateDir('index-');
  const now = Date.now();
  await writeFile(join(dir, 'quota-marks.json'), JSON.stringify({ marks: { pa: { markedAtMs: now - 1000, untilMs: now + 3_600_000, v: 1 } } }));
  const { ctx, listeners } = fakeContext();
  t.after(() => ctx.dispose());
  const row = { probes: false, stateDir: dir, quota: { longTermDelayMs: 1000 },
    pools: [{ name: 'main', routes: [{ provider: 'pa', model: 'm' }, { provider: 'pb', model: 'm' }] }] };
  await apply(ctx, row, { compiled: compileModule() });
  const routed = await request(listeners, { provider: 'pa', model: 'm' });
  assert.deepEqual([routed.provider, routed.model], ['pb', 'm']);
  await ctx.dispose();
  await readFile(join(dir, 'quota-marks.json.migrated'));
  assert.ok((await auditOf(dir)).some((r) => r.type === 'quota-marks-migrated'));
});

test('enabled: false installs no listener and no module; a bad value stops activation naming the key', async () => {
  const { ctx, listeners, commands } = fakeContext();
  let parts;
  await apply(ctx, { chain: CHAIN, enabled: false }, { expose: (p) => { parts = p; } }); // the host passes no module: none is compiled
  assert.equal(listeners.size, 0);
  assert.equal(parts, undefined, 'no engine');
  assert.match((await commands.get('resilience').handler({ agent, rawInput: '' })).text, /is off \(enabled: false/);
  await ctx.dispose();
  await assert.rejects(apply(fakeContext().ctx, { chain: CHAIN, enabled: 'no' }), /config key "enabled": must be true or false/);
});

/** One host run on dir: apply, then `run` with the listeners and the exposed parts, then dispose; the run's audit records. */
async function hostRun(dir, config, run, seams = { compiled: compileModule() }) {
  const { ctx, listeners, commands } = fakeContext();
  let parts;
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir, ...config }, { ...seams, expose: (p) => { parts = p; } });
  try {
    await run({ listeners, commands, ...parts });
  } finally {
    await ctx.dispose();
  }
  const audit = await auditOf(dir);
  return audit.slice(audit.findLastIndex((r) => r.type === 'boot'));
}

/** Awaits p with the event loop held open (a real host has its request in flight). */
async function alive(p) {
  const hold = setInterval(() => {}, 1000);
  try {
    return await p;
  } finally {
    clearInterval(hold);
  }
}

const coldWord = async (dir) => JSON.parse(await readFile(join(dir, 'cold-start.json'), 'utf8'));

test('a cold start: the last run\'s module allowed it, so a new session\'s first request goes before the bring-up, which follows and is told of it', async () => {
  const dir = await usedStateDir('index-');
  await hostRun(dir, {}, async ({ listeners }) => { await request(listeners); });
  assert.equal((await coldWord(dir)).coldPass, true, 'the first run left its module\'s word');

  let compiles = 0;
  const compile = () => { compiles++; return compileModule(); };
  const audit = await hostRun(dir, {}, async ({ listeners, engine, up }) => {
    assert.equal(compiles, 0, 'nothing needs the module before the bring-up: its read and compile wait');
    assert.deepEqual(await request(listeners), CHAIN[0]);
    assert.equal(engine.up, false, 'the request went before the bring-up');
    assert.equal(compiles, 0);
    await alive(up); // its kick is an unref'd timer: a host has the request in flight
    assert.equal(engine.up, true, 'the bring-up followed on its own');
    assert.equal(compiles, 1);
  }, { compile });
  const types = audit.map((r) => r.type);
  assert.ok(types.indexOf('cold-pass') > types.indexOf('boot'), types.join(' '));
  const cold = audit.find((r) => r.type === 'cold-pass');
  assert.deepEqual([cold.agent, cold.channel], ['a1', CHAIN[0]]);
  assert.ok(audit.some((r) => r.type === 'input' && r.export === 'decide' && r.event.kind === 'request' && r.event.agent === 'a1'), 'the module was told');
  assert.ok(!types.includes('cold-pass-missed'));
});

test('a cold start whose run ends before the bring-up\'s kick: disposal settles at once and compiles nothing', async () => {
  const dir = await usedStateDir('index-');
  await hostRun(dir, {}, async ({ listeners }) => { await request(listeners); });
  // The session projection waits on the engine inside its inject callback
  // (so did the settings card: web.test.mjs); Cordis awaits those callbacks
  // at disposal, and the host forces its exit 5 s into a disposal that does not end.
  const sessionProjections = { register: () => () => {} };
  const { ctx, listeners } = fakeContext({ sessionProjections });
  let compiles = 0;
  let parts;
  await apply(ctx, { chain: CHAIN, probes: false, stateDir: dir }, { compile: () => { compiles++; return compileModule(); }, expose: (p) => { parts = p; } });
  assert.deepEqual(await request(listeners), CHAIN[0]);
  assert.equal(parts.engine.up, false, 'the request went cold');
  await ctx.dispose(); // with nothing else holding the event loop: a wait left pending ends the test unfinished
  assert.equal(compiles, 0, 'a bring-up settled only to end compiles nothing');
  const audit = await auditOf(dir);
  const run = audit.slice(audit.findIndex((r) => r.type === 'stop') + 1);
  assert.deepEqual(run.map((r) => r.type).filter((t) => t !== 'input'), ['stop'], `no boot, no settings-not-served: the run ended before it began: ${JSON.stringify(run)}`);
});

test('a cold-sent request that fails before the bring-up brings the engine up, and its failure is decided as any other', async () => {
  const dir = await usedStateDir('index-');
  await hostRun(dir, { failureThreshold: 1 }, async ({ listeners }) => { await request(listeners); });
  const audit = await hostRun(dir, { failureThreshold: 1 }, async ({ listeners, engine }) => {
    await request(listeners);
    assert.equal(engine.up, false);
    const handed = await listeners.get('agent/request-error')(failure('QUOTA'), async () => undefined);
    assert.deepEqual(handed, { kind: 'retry' }, 'failed over to the secondary, not handed to the host');
    assert.deepEqual(await request(listeners), CHAIN[1]);
  });
  const failover = audit.find((r) => r.type === 'failover');
  assert.deepEqual([failover?.from, failover?.to], [CHAIN[0], CHAIN[1]], audit.map((r) => r.type).join(' '));
});

test('no cold start after a run that left a channel open, nor under another config: the first request waits for the module', async () => {
  const dir = await usedStateDir('index-');
  await hostRun(dir, { failureThreshold: 1 }, async ({ listeners }) => {
    await request(listeners);
    await listeners.get('agent/request-error')(failure('QUOTA'), async () => undefined);
  });
  assert.equal((await coldWord(dir)).coldPass, false, 'an open breaker: the next module would route away from it');
  let compiles = 0;
  let audit = await hostRun(dir, { failureThreshold: 1 }, async ({ listeners, engine }) => {
    assert.equal(compiles, 1, 'no cold start to wait for: the compile starts at activation');
    assert.deepEqual(await request(listeners), CHAIN[1], 'routed off the open primary');
    assert.equal(engine.up, true);
  }, { compile: () => { compiles++; return compileModule(); } });
  assert.ok(!audit.some((r) => r.type === 'cold-pass'));

  const other = await usedStateDir('index-');
  await hostRun(other, {}, async ({ listeners }) => { await request(listeners); });
  audit = await hostRun(other, { failureThreshold: 7 }, async ({ listeners, engine }) => {
    await request(listeners);
    assert.equal(engine.up, true, 'the word was for another config');
  });
  assert.ok(!audit.some((r) => r.type === 'cold-pass'));
  assert.equal((await coldWord(other)).config, JSON.stringify({ chain: CHAIN, probes: false, failureThreshold: 7 }), 'the word is now this config\'s');
});

test('a corrupt cold-start.json is set aside: no cold start, and the next save writes it again', async () => {
  const dir = await usedStateDir('index-');
  await writeFile(join(dir, 'cold-start.json'), '{"config": ');
  const audit = await hostRun(dir, {}, async ({ listeners, engine }) => {
    await request(listeners);
    assert.equal(engine.up, true);
  });
  assert.ok(audit.some((r) => r.type === 'cold-start-set-aside') || (await auditOf(dir)).some((r) => r.type === 'cold-start-set-aside'));
  assert.equal((await coldWord(dir)).coldPass, true);
});

test('a run that ends before its cold start\'s bring-up never brings the module up, and nothing is written after stop', async () => {
  const dir = await usedStateDir('index-');
  await hostRun(dir, {}, async ({ listeners }) => { await request(listeners); });
  const before = (await auditOf(dir)).length;
  await hostRun(dir, {}, async ({ listeners, engine }) => {
    await request(listeners);
    assert.equal(engine.up, false);
  });
  await new Promise((r) => setTimeout(r, 300)); // past the kick's delay: a timer left armed would have fired
  const audit = (await auditOf(dir)).slice(before);
  assert.deepEqual(audit.map((r) => r.type), ['stop'], 'no boot, no cold-pass record: the module never came up');
});

test('a first run: no health records and a row that routes no session by rule, so its first request goes cold; the bring-up follows and leaves the word', async () => {
  const dir = await firstRunStateDir('index-');
  const audit = await hostRun(dir, {}, async ({ listeners, engine, up }) => {
    assert.deepEqual(await request(listeners), CHAIN[0]);
    assert.equal(engine.up, false, 'the request went before the bring-up, once the module had checked the row');
    await alive(up);
    assert.equal(engine.up, true, 'the bring-up followed on its own');
  }, { compile: compileModule });
  const types = audit.map((r) => r.type);
  assert.deepEqual(audit.find((r) => r.type === 'cold-pass')?.channel, CHAIN[0], types.join(' '));
  assert.ok(!types.includes('cold-pass-missed'), types.join(' '));
  assert.equal((await coldWord(dir)).coldPass, true, 'and the module\'s own word is on disk for the next run');
});

test('a first run whose row has pools or a quota object waits for the module, as does one sharing health through Redis', async () => {
  for (const row of [{ pools: [{ name: 'main', routes: [CHAIN[0]] }] }, { quota: {} }, { quota: { active: false } }]) {
    const dir = await firstRunStateDir('index-');
    assert.equal(firstRunWord(dir, row, false), false, JSON.stringify(row));
    await hostRun(dir, row, async ({ listeners, engine }) => {
      await request(listeners);
      assert.equal(engine.up, true, `the request waited for the module: ${JSON.stringify(row)}`);
    });
  }
  const dir = await firstRunStateDir('index-');
  assert.equal(firstRunWord(dir, {}, false), true);
  assert.equal(firstRunWord(dir, { pools: null, quota: null }, false), true, 'a null key is no key (the codec reads it so)');
  assert.equal(firstRunWord(dir, {}, true), false, 'Redis may hold other hosts\' records');
  await writeFile(join(dir, 'health.json'), '{}');
  assert.equal(firstRunWord(dir, {}, false), false, 'a home with a health file has records to weigh');
});

test('a first run that ends before its bring-up leaves the word all the same, and the next run starts cold from it without compiling first', async () => {
  const dir = await firstRunStateDir('index-');
  await hostRun(dir, {}, async ({ listeners, engine }) => {
    await request(listeners);
    assert.equal(engine.up, false, 'ended before the kick');
  }, { compile: compileModule });
  assert.equal((await coldWord(dir)).coldPass, true);
  await assert.rejects(readFile(join(dir, 'health.json')), { code: 'ENOENT' }, 'no records: none were learnt');
  let compiles = 0;
  await hostRun(dir, {}, async ({ listeners, engine }) => {
    assert.deepEqual(await request(listeners), CHAIN[0]);
    assert.equal(engine.up, false);
    assert.equal(compiles, 0, 'the row was checked by the run that left the word');
  }, { compile: () => { compiles++; return compileModule(); } });
});
