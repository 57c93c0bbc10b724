import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { compileModule } from '../engine.js';
import { ModuleError, ModuleInstance, TrapError } from '../kernel.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
let compiled;
let faultCompiled; // decide exits the module: a real trap (plugin/fault_dshr.go)
before(async () => {
  compiled = await compileModule();
  faultCompiled = await WebAssembly.compile(await readFile(new URL('../../build/dsh-resilience-fault.wasm', import.meta.url)));
});

const configured = () => {
  const m = new ModuleInstance(compiled);
  m.call('configure', JSON.stringify({ chain: CHAIN }));
  return m;
};
const request = (nowMs, agent = 'a1') => JSON.stringify({ nowMs, event: { kind: 'request', agent, proposed: CHAIN[0] } });

test('configure answers the resolved config with every default filled in', () => {
  const m = new ModuleInstance(compiled);
  const out = JSON.parse(m.call('configure', JSON.stringify({ chain: CHAIN, cooldownMs: 5000 })));
  assert.deepEqual(out.config.chain, CHAIN);
  assert.equal(out.config.cooldownMs, 5000);
  assert.equal(out.config.failureThreshold, 3);
});

for (const [name, input, pattern] of [
  ['non-JSON', 'not json', /not valid JSON/],
  ['truncated JSON', '{"nowMs": 1, "event": {"kind"', /not valid JSON/],
  ['an unknown event kind', JSON.stringify({ nowMs: 1, event: { kind: 'nope', agent: 'a' } }), /unknown event kind "nope"/],
  ['a missing field', JSON.stringify({ nowMs: 1, event: { kind: 'request', agent: 'a' } }), /event\.proposed/],
  ['a wrong type', JSON.stringify({ nowMs: 'soon', event: { kind: 'settled', agent: 'a' } }), /nowMs/],
]) {
  test(`decide with ${name} answers an error and the instance stays usable`, () => {
    const m = configured();
    assert.throws(() => m.call('decide', input), (e) => e instanceof ModuleError && pattern.test(e.message));
    assert.deepEqual(JSON.parse(m.call('decide', request(1))).verdict, { kind: 'pass' });
  });
}

test('configure with an unknown key names it, and a later good configure works', () => {
  const m = new ModuleInstance(compiled);
  assert.throws(() => m.call('configure', '{"chian": []}'), /config key "chian": unknown key/);
  assert.throws(() => m.call('decide', request(1)), /not configured/);
  m.call('configure', JSON.stringify({ chain: CHAIN }));
  assert.equal(JSON.parse(m.call('decide', request(1))).verdict.kind, 'pass');
});

test('a real trap surfaces as TrapError, not as a module error', () => {
  const m = new ModuleInstance(faultCompiled);
  m.call('configure', JSON.stringify({ chain: CHAIN }));
  assert.throws(() => m.call('decide', request(1)), (e) => e instanceof TrapError && /exited with code 3/.test(e.message));
});

test('the kernel heap does not grow with calls (it resets per call)', () => {
  const m = configured();
  for (let i = 0; i < 2000; i++) m.call('decide', request(i, `agent-${i % 7}`));
  const kernelBytes = m.heap.mem.length;
  const guestBytes = m.memoryBytes;
  for (let i = 0; i < 20000; i++) m.call('decide', request(2000 + i, `agent-${i % 7}`));
  assert.equal(m.heap.mem.length, kernelBytes);
  assert.ok(m.memoryBytes - guestBytes < 4 * 1024 * 1024, `guest memory grew ${m.memoryBytes - guestBytes} bytes`);
});

test('the direct path answers every call as the Extism kernel does', () => {
  const direct = new ModuleInstance(compiled);
  const kernel = new ModuleInstance(compiled, { kernel: true });
  assert.equal(direct.direct, true, 'the module has the direct path');
  assert.equal(kernel.direct, false);
  const failure = (nowMs, agent, code, status) => JSON.stringify({ nowMs, event: {
    kind: 'request-error', agent, provider: 'p', failure: { code, status }, phase: 'after-host',
    hostRetry: { mode: 'normal', maxRetries: 2, retryableCodes: ['RATE_LIMIT', 'SERVER'] }, rand: nowMs } });
  const calls = [['decide', request(1)], ['configure', JSON.stringify({ chain: CHAIN })], ['decide', ''], ['snapshot', '']];
  for (let i = 0; i < 400; i++) {
    const agent = `agent-${i % 13}`;
    calls.push(['decide', request(1000 * i, agent)]);
    if (i % 3 === 0) calls.push(['decide', failure(1000 * i + 5, agent, i % 2 ? 'SERVER' : 'RATE_LIMIT', i % 2 ? 500 : 429)]);
    if (i % 50 === 0) calls.push(['snapshot', ''], ['decide', 'not json'], ['decide', 'é'.repeat(3000)]);
  }
  const answer = (m, name, input) => {
    try { return m.call(name, input); } catch (e) { return `${e.name}: ${e.message}`; }
  };
  for (const [i, [name, input]] of calls.entries()) {
    assert.equal(answer(direct, name, input), answer(kernel, name, input), `call ${i}: ${name} ${input.slice(0, 200)}`);
  }
});
