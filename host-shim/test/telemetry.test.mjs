// The host's telemetry seam (telemetry.js): the module's seam record for
// each alerting audit record, emitted with the record as its body; nothing
// when the service is absent; a throwing backend never reaches the writer.
// Which records reach it, their severity and attributes are the module's:
// policy/telemetry/telemetry_test.go.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AUDIT_TYPES } from '../audit-types.js';
import { tapAudit } from '../audit-tap.js';
import { compileModule, Engine } from '../engine.js';
import { TELEMETRY_TYPES } from '../policy-defaults.js';
import { telemetrySink } from '../telemetry.js';

const P = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const S = { provider: 'mock', model: 'mock-b' };
const engine = new Engine(await compileModule(), { chain: [P, S] }, { warn() {} });

test('every type the module maps is an audit type', () => {
  for (const t of TELEMETRY_TYPES) assert.ok(Object.hasOwn(AUDIT_TYPES, t), t);
});

test('a failover becomes one ops record: the module\'s time, severity and attributes, the record as its body', async () => {
  const got = [];
  const log = { write: async () => {}, flush: async () => {}, failures: 0 };
  const tap = tapAudit(log, [telemetrySink({ get: (n) => (n === 'sessionTelemetry' ? { emit: (r) => got.push(r) } : undefined) }, () => engine)]);
  await tap.write({ type: 'failover', agent: 's-1', from: P, to: S, code: 'RATE_LIMIT', class: 'transient' });
  assert.equal(got.length, 1);
  const { time, ...rest } = got[0];
  assert.ok(Math.abs(time - Date.now()) < 60_000, `the record's time: ${time}`);
  assert.deepEqual(rest, {
    channel: 'ops',
    severity: 'info',
    attributes: {
      'telemetry.op': 'dsh-resilience.failover', 'resilience.type': 'failover', 'session.id': 's-1', 'agent.id': 's-1',
      'from.provider': P.provider, 'from.model': P.model, 'to.provider': S.provider, 'to.model': S.model,
      'error.code': 'RATE_LIMIT', 'error.class': 'transient',
    },
    body: { type: 'failover', agent: 's-1', from: P, to: S, code: 'RATE_LIMIT', class: 'transient' },
  });
});

test('without the service nothing happens; a throwing service never reaches the writer; other records are not asked about', async () => {
  const written = [];
  const log = { write: async (r) => { written.push(r); }, flush: async () => {}, failures: 0 };
  const absent = tapAudit(log, [telemetrySink({ get: () => undefined }, () => engine)]);
  await absent.write({ type: 'give-up', channel: P });
  const thrower = tapAudit(log, [telemetrySink({ get: () => ({ emit() { throw new Error('backend down'); } }) }, () => engine)]);
  await thrower.write({ type: 'give-up', channel: P });
  const noModule = tapAudit(log, [telemetrySink({ get: () => ({ emit() { throw new Error('never asked'); } }) }, () => undefined)]);
  await noModule.write({ type: 'give-up', channel: P });
  assert.equal(written.length, 3);
  const got = [];
  let asked = 0;
  const counting = /** @type {any} */ ({ ask: (name, input) => { asked++; return engine.ask(name, input); } });
  const mounted = tapAudit(log, [telemetrySink({ get: (n) => (n === 'sessionTelemetry' ? { emit: (r) => got.push(r) } : undefined) }, () => counting)]);
  await mounted.write({ type: 'circuit-open', channel: P, from: 'closed', cause: 'failures' });
  await mounted.write({ type: 'boot', pid: 1 });
  await mounted.write({ type: 'input', export: 'decide' });
  assert.equal(got.length, 1);
  assert.equal(got[0].severity, 'warn');
  assert.equal(asked, 1, 'only an alerting type is asked about');
});
