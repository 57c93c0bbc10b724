import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compileModule, inputRecord, Engine as Policy } from '../engine.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const quiet = { warn() {} };
let compiled;
let faultCompiled; // decide exits the module: a real trap (plugin/fault_dshr.go)
before(async () => {
  compiled = await compileModule();
  faultCompiled = await WebAssembly.compile(await readFile(new URL('../../build/dsh-resilience-fault.wasm', import.meta.url)));
});

const quota = (nowMs) => ({
  kind: 'request-error', agent: 'a1', provider: 'p', phase: 'before-host', rand: 0,
  failure: { code: 'QUOTA', message: 'Insufficient Balance', status: 402 },
});

test('an invalid config throws at construction, naming the key', () => {
  assert.throws(() => new Policy(compiled, { chain: CHAIN, maxFailovers: -1 }, quiet), /dsh-resilience: config key "maxFailovers"/);
  assert.throws(() => new Policy(compiled, { chain: [{ provider: 'p' }] }, quiet), /chain\[0\]\.model/);
});

test('NaN, Infinity and null numbers (YAML .nan, .inf, ~) are refused naming the key, not read as defaults', () => {
  assert.throws(() => new Policy(compiled, { chain: CHAIN, cooldownMs: NaN }, quiet), /config key "cooldownMs": .*not NaN/);
  assert.throws(() => new Policy(compiled, { chain: CHAIN, stall: { idleMs: Infinity } }, quiet), /config key "stall.idleMs": .*not Infinity/);
  assert.throws(() => new Policy(compiled, { chain: CHAIN, failureThreshold: null }, quiet), /config key "failureThreshold": .*not null/);
  assert.throws(() => new Policy(compiled, { chain: CHAIN, tools: { retry: ['a', 'a'] } }, quiet), /config key "tools.retry\[1\]": "a" duplicates/);
});

test('every trap fails open (undefined), is reported once, and counted after', () => {
  const reports = [];
  const p = new Policy(faultCompiled, { chain: CHAIN }, quiet, (r) => reports.push(r));
  for (let i = 0; i < 3; i++) {
    assert.equal(p.decide(1000 + i, { kind: 'request', agent: 'a1', proposed: CHAIN[0] }), undefined);
  }
  assert.deepEqual(reports.map((r) => [r.type, r.what, r.error]), [['module-failure', 'request', 'TrapError']]);
  assert.deepEqual(p.failureCounts(), { 'TrapError:request': 3 });
});

test('a rebuilt instance keeps the config and the channel health', () => {
  const p = new Policy(compiled, { chain: CHAIN, cooldownMs: 5000 }, quiet);
  p.decide(1000, { kind: 'request', agent: 'a1', proposed: CHAIN[0] });
  assert.equal(p.decide(1001, quota(1001)).verdict.kind, 'retry');
  const before = p.instance;

  p.rebuild();

  assert.notEqual(p.instance, before);
  const swapped = p.decide(1002, { kind: 'request', agent: 'a3', proposed: CHAIN[0] });
  assert.deepEqual(swapped.verdict, { kind: 'swap', provider: 'p', model: 'b' }, 'a is still open');
  assert.deepEqual(p.snapshot().channels.map((c) => [c.channel.model, c.state, c.openUntilMs]), [['a', 'open', 6001]]);
});

test('a module error answer is reported once and counted after', () => {
  const reports = [];
  const p = new Policy(compiled, { chain: CHAIN }, quiet, (r) => reports.push(r));
  for (let i = 0; i < 3; i++) assert.equal(p.decide(1, { kind: 'request', agent: 'a' }), undefined);
  assert.equal(reports.length, 1);
  assert.deepEqual(p.failureCounts(), { 'ModuleError:request': 3 });
});

test('a rebuilt instance is told everything the old one knew: health, the backup, model info', async () => {
  const { TrapError } = await import('../engine.js');
  const CH3 = [...CHAIN, { provider: 'q', model: 'c' }];
  const backup = { provider: 'v/x', model: 'm' };
  const p = new Policy(compiled, { chain: CH3, cooldownMs: 5000 }, quiet);
  p.decide(1000, { kind: 'set-backup', channel: backup });
  p.decide(1000, { kind: 'model-info', channel: backup, known: true, efforts: ['high'] });
  p.decide(1000, { kind: 'request', agent: 'a1', proposed: CHAIN[0] });
  assert.equal(p.decide(1001, quota(1001)).verdict.kind, 'retry');
  assert.equal(p.health, undefined, 'no snapshot per decision');
  assert.equal(p.healthDirty, true);

  p.fail(new TrapError(new Error('boom')), 'request'); // rebuilds

  const swapped = p.decide(1002, { kind: 'request', agent: 'a3', proposed: CHAIN[0], reasoningEffort: 'high' });
  assert.deepEqual(swapped.verdict, { kind: 'swap', provider: 'v/x', model: 'm' }, 'the backup, keeping the effort its model lists');
});

test('health is snapshotted lazily: on snapshot (the save), not per decision', () => {
  const p = new Policy(compiled, { chain: CHAIN }, quiet);
  p.decide(1000, { kind: 'request', agent: 'a1', proposed: CHAIN[0] });
  p.decide(1001, quota(1001));
  assert.equal(p.health, undefined);
  p.snapshot();
  assert.match(p.health, /"open"/);
  assert.equal(p.healthDirty, false);
});

test('a trapped instance whose breakers changed is rebuilt with its last answerable snapshot', () => {
  const p = new Policy(faultCompiled, { chain: CHAIN }, quiet);
  p.restore(JSON.stringify({ channels: [{ channel: CHAIN[0], state: 'open', failures: 1, opens: 1, openUntilMs: 9e15, lastCode: 'QUOTA', changedAtMs: 5 }] }), 1000);
  assert.equal(p.decide(1001, { kind: 'request', agent: 'a1', proposed: CHAIN[0] }), undefined); // traps, rebuilds
  assert.deepEqual(p.snapshot().channels.map((c) => [c.channel.model, c.state]), [['a', 'open']]);
});

test('every policy input is recorded for the what-if replay, a tool failure\'s message left out', () => {
  const records = [];
  const p = new Policy(compiled, { chain: CHAIN }, quiet, () => {}, (r) => records.push(r));
  p.decide(1000, quota(1000));
  const tool = { kind: 'tool-result', call: 'c1', tool: 'fetch', attempt: 1, rand: 0, failure: { code: 'X', message: 'GET https://secret.example/?token=abc failed' } };
  p.decide(2000, tool);
  assert.deepEqual(records.map((r) => r.export), ['configure', 'decide', 'decide']);
  assert.deepEqual(records[0].config, { chain: CHAIN });
  assert.deepEqual(records[1], { type: 'input', export: 'decide', nowMs: 1000, event: quota(1000) });
  assert.equal(records[2].event.failure.message, '');
  assert.equal(records[2].event.failure.code, 'X');
  assert.equal(tool.failure.message.includes('secret'), true, 'the caller\'s event is not changed');
  assert.equal(inputRecord(5, { kind: 'wake' }).nowMs, 5);
});

test('checks and defaults ask the running instance, which keeps its config and state', () => {
  const p = new Policy(compiled, { chain: CHAIN, failureThreshold: 2, cooldownMs: 5000 }, quiet);
  const running = p.instance;
  p.decide(1000, { kind: 'request', agent: 'a1', proposed: CHAIN[0] });
  assert.equal(p.decide(1001, quota(1001)).verdict.kind, 'retry'); // a opens
  assert.equal(p.defaults().failureThreshold, 3);
  assert.equal(p.defaults({ persistent: true }).persistent, true);
  assert.equal(p.check({ chain: CHAIN, cooldownMs: 5 }), undefined);
  assert.match(p.check({ chain: CHAIN, maxFailovers: -1 }), /^dsh-resilience: config key "maxFailovers"/);
  assert.equal(p.instance, running, 'no new instance');
  assert.equal(p.resolved.failureThreshold, 2);
  assert.deepEqual(p.failureCounts(), {}, 'a refused config is no module failure');
  // resolve reset nothing: a is still open.
  assert.deepEqual(p.snapshot().channels.map((c) => [c.channel.model, c.state, c.openUntilMs]), [['a', 'open', 6001]]);
  assert.deepEqual(p.decide(1002, { kind: 'request', agent: 'a3', proposed: CHAIN[0] }).verdict, { kind: 'swap', provider: 'p', model: 'b' });
});
