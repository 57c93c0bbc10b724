// dsh-model-failover's events, heard beside ours, with that plugin's
// documented payloads (host-shim/compat-events.js states them and the
// documented differences).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';
import { emitCompat, modelFailoverEvent } from '../compat-events.js';

function env() {
  const heard = [];
  return {
    heard,
    env: {
      ctx: { emit: (name, payload) => heard.push([name, payload]) }, audit: { write() {} }, logger: { info() {}, warn() {} },
      scheduleWake() {}, probe() {}, healthChanged() {},
    },
  };
}
const A = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const B = { provider: 'mock', model: 'mock-b' };
const compat = (heard) => heard.filter(([n]) => n.startsWith('model-failover/'));

test('circuit and failover effects are mirrored with the documented payloads, after ours', () => {
  const { heard, env: e } = env();
  carryOut([
    { kind: 'circuit', channel: A, from: 'closed', to: 'open', cause: 'RATE_LIMIT', class: 'transient', openUntilMs: 1 },
    { kind: 'circuit', channel: { provider: A.provider, model: '*' }, from: 'closed', to: 'open', cause: 'RATE_LIMIT', openUntilMs: 1, trippedBy: A.model },
    { kind: 'failover', agent: 'agent-1', from: A, to: B, code: 'RATE_LIMIT', class: 'transient' },
    { kind: 'circuit', channel: A, from: 'half-open', to: 'closed', cause: 'recovered' },
    { kind: 'circuit', channel: { provider: A.provider, model: '*' }, from: 'open', to: 'closed', cause: 'recovered' },
    { kind: 'circuit', channel: B, from: 'open', to: 'half-open', cause: 'cooled-down' },
  ], e);
  assert.deepEqual(compat(heard), [
    ['model-failover/circuit-opened', { ...A, level: 'model' }],
    ['model-failover/circuit-opened', { ...A, level: 'platform' }],
    ['model-failover/failover', { from: A, to: B, agentId: 'agent-1' }],
    ['model-failover/circuit-closed', { ...A, level: 'model' }],
  ]);
  // Ours first, then theirs: a listener of both sees the same order each time.
  assert.equal(heard[0][0], 'dsh-resilience/circuit-opened');
  assert.equal(heard[1][0], 'model-failover/circuit-opened');
});

test('a platform circuit none of whose models is down is named "*"', () => {
  const map = modelFailoverEvent;
  assert.deepEqual(map('dsh-resilience/circuit-opened', { channel: { provider: 'p', model: '*' } }),
    ['model-failover/circuit-opened', { provider: 'p', model: '*', level: 'platform' }]);
});

test('probe outcomes carry ok, and a message only when it failed', () => {
  const map = modelFailoverEvent;
  assert.deepEqual(map('dsh-resilience/probe', { channel: A, ok: true, ms: 3 }), ['model-failover/probe', { ...A, ok: true }]);
  assert.deepEqual(map('dsh-resilience/probe', { channel: A, ok: false, code: 'SERVER', message: 'upstream 503', ms: 3 }),
    ['model-failover/probe', { ...A, ok: false, message: 'upstream 503' }]);
  assert.deepEqual(map('dsh-resilience/probe', { channel: A, ok: false, code: 'TIMEOUT' }),
    ['model-failover/probe', { ...A, ok: false, message: 'TIMEOUT' }]);
});

test('events of ours that model-failover never had are not mirrored', () => {
  const map = modelFailoverEvent;
  for (const e of ['dsh-resilience/give-up', 'dsh-resilience/stall', 'dsh-resilience/tool-retry']) assert.equal(map(e, {}), undefined);
});

test('a throwing listener of the mirrored event never reaches the caller', () => {
  const warned = [];
  const ctx = { emit() { throw new Error('listener broke'); } };
  assert.doesNotThrow(() => emitCompat(ctx, 'dsh-resilience/failover', { agent: 'a', from: A, to: B }, { warn: (...a) => warned.push(a) }));
  assert.equal(warned.length, 1);
});
