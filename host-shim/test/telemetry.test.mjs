// The host's telemetry seam (telemetry.js): which audit records reach it,
// with which severity and attributes; nothing when the service is absent; a
// throwing backend never reaches the writer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_TYPES } from '../audit-types.js';
import { tapAudit } from '../audit-tap.js';
import { TELEMETRY_SEVERITY, telemetryRecord, telemetrySink } from '../telemetry.js';

const P = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const S = { provider: 'mock', model: 'mock-b' };
const at = '2026-12-01T10:00:00.000Z';

test('every mapped type is an audit type; severities are give-up error, open warn, others info', () => {
  for (const t of Object.keys(TELEMETRY_SEVERITY)) assert.ok(Object.hasOwn(AUDIT_TYPES, t), t);
  assert.equal(TELEMETRY_SEVERITY['give-up'], 'error');
  assert.equal(TELEMETRY_SEVERITY['circuit-open'], 'warn');
  const rest = Object.entries(TELEMETRY_SEVERITY).filter(([t]) => t !== 'give-up' && t !== 'circuit-open');
  assert.ok(rest.every(([, s]) => s === 'info'));
  for (const t of ['failover', 'retry', 'quota-routed', 'quota-wait-entered', 'tool-retry', 'circuit-closed', 'circuit-half-open']) {
    assert.ok(TELEMETRY_SEVERITY[t], `${t} reaches telemetry`);
  }
});

test('a failover becomes one ops record carrying session, channels, code and class', () => {
  const r = telemetryRecord({ at, type: 'failover', agent: 's-1', from: P, to: S, code: 'RATE_LIMIT', class: 'transient' }, 0);
  assert.deepEqual(r, {
    channel: 'ops',
    time: Date.parse(at),
    severity: 'info',
    attributes: {
      'telemetry.op': 'dsh-resilience.failover', 'resilience.type': 'failover', 'session.id': 's-1', 'agent.id': 's-1',
      'from.provider': P.provider, 'from.model': P.model, 'to.provider': S.provider, 'to.model': S.model,
      'error.code': 'RATE_LIMIT', 'error.class': 'transient',
    },
    body: { type: 'failover', agent: 's-1', from: P, to: S, code: 'RATE_LIMIT', class: 'transient' },
  });
});

test('a circuit open is warn, with its channel, previous state and cause', () => {
  const r = telemetryRecord({ at, type: 'circuit-open', channel: P, from: 'closed', cause: 'failures', class: 'quota', openUntil: at }, 0);
  assert.equal(r.severity, 'warn');
  assert.equal(r.attributes['channel.provider'], P.provider);
  assert.equal(r.attributes['channel.model'], P.model);
  assert.equal(r.attributes['circuit.from'], 'closed');
  assert.equal(r.attributes['resilience.cause'], 'failures');
  assert.equal(r.attributes['circuit.open_until'], at);
});

test('a hedge: both channels, who won, the delay, what it saved and what the loser cost', () => {
  const at = '2026-12-01T00:00:00.000Z';
  const r = telemetryRecord({ at, type: 'hedge', agent: 's', from: { provider: 'p', model: 'a' }, to: { provider: 'q', model: 'b' },
    afterMs: 2000, reason: 'hedge.afterMs', winner: 'hedge', firstTokenMs: 2500, loserWaitMs: 2500, savedMs: 17500 }, 0);
  assert.equal(r.severity, 'info');
  assert.deepEqual([r.attributes['from.model'], r.attributes['to.model'], r.attributes['hedge.winner'], r.attributes['hedge.after_ms'],
    r.attributes['hedge.saved_ms'], r.attributes['hedge.loser_wait_ms'], r.attributes['session.id']], ['a', 'b', 'hedge', 2000, 17500, 2500, 's']);
});

test('a give-up is error; a return keeps its text channels; a stall its route', () => {
  assert.equal(telemetryRecord({ at, type: 'give-up', agent: 's', channel: P, reason: 'budget-exhausted', code: 'QUOTA' }, 0).severity, 'error');
  const ret = telemetryRecord({ at, type: 'return', agent: 's', from: 'mock/mock-b', to: 'deepseek-official/deepseek-v4-flash' }, 0);
  assert.equal(ret.attributes.from, 'mock/mock-b');
  assert.equal(ret.attributes.to, 'deepseek-official/deepseek-v4-flash');
  assert.equal(ret.attributes['circuit.from'], undefined);
  const stall = telemetryRecord({ at, type: 'stall', route: P, bound: 'first-chunk', silenceMs: 2000, limitMs: 2000, chunks: 0 }, 0);
  assert.equal(stall.attributes['channel.model'], P.model);
  assert.equal(stall.attributes['stall.bound'], 'first-chunk');
});

test('a spill is info, with both channels as text, its code and the failures that made it', () => {
  const r = telemetryRecord({ at, type: 'spill', agent: 's', from: 'deepseek-official/deepseek-v4-flash', to: 'mock/mock-b', code: 'SERVER', failures: 2 }, 0);
  assert.equal(r.severity, 'info');
  assert.deepEqual([r.attributes.from, r.attributes.to, r.attributes['error.code'], r.attributes['resilience.failures'], r.attributes['session.id']],
    ['deepseek-official/deepseek-v4-flash', 'mock/mock-b', 'SERVER', 2, 's']);
});

test('records that are not alerting signals do not reach telemetry', () => {
  for (const type of ['boot', 'input', 'stop', 'probe', 'balance', 'notify-failed', 'health-merged']) {
    assert.equal(telemetryRecord({ at, type }, 0), undefined, type);
  }
});

test('attributes are strings or numbers only', () => {
  const r = telemetryRecord({ at, type: 'tool-retry', agent: 's', tool: 't', call: 'c1', attempt: 2, reason: 'socket', delayMs: 100, weird: { x: 1 } }, 0);
  for (const v of Object.values(r.attributes)) assert.ok(typeof v === 'string' || typeof v === 'number');
});

test('without the service nothing happens; a throwing service never reaches the writer', async () => {
  const written = [];
  const log = { write: async (r) => { written.push(r); }, flush: async () => {}, failures: 0 };
  const absent = tapAudit(log, [telemetrySink({ get: () => undefined })]);
  await absent.write({ type: 'give-up', channel: P });
  const thrower = tapAudit(log, [telemetrySink({ get: () => ({ emit() { throw new Error('backend down'); } }) })]);
  await thrower.write({ type: 'give-up', channel: P });
  assert.equal(written.length, 2);
  const got = [];
  const mounted = tapAudit(log, [telemetrySink({ get: (n) => (n === 'sessionTelemetry' ? { emit: (r) => got.push(r) } : undefined) })]);
  await mounted.write({ type: 'circuit-open', channel: P, from: 'closed', cause: 'failures' });
  await mounted.write({ type: 'boot', pid: 1 });
  assert.equal(got.length, 1);
  assert.equal(got[0].severity, 'warn');
});
