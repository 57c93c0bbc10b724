import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { contextTokensOf, failureOf, hostRetryOf, modelInfoEvent, probeResultEvent, requestErrorEvent, requestEvent, restoreRouteEvent, setBackupEvent, setPoolEvent } from '../events.js';

const SHIM = fileURLToPath(new URL('..', import.meta.url));

test('every module event is built in events.js: no other shim file writes an event kind of the contract', async () => {
  const types = await readFile(join(SHIM, 'policy-types.d.ts'), 'utf8');
  const kinds = [...types.matchAll(/export interface Event[A-Za-z]+ extends [A-Za-z]+ \{\n  kind: '([a-z-]+)';/g)].map((m) => m[1]);
  const bare = [...types.matchAll(/export interface Event[A-Za-z]+ \{\n  kind: '([a-z-]+)';/g)].map((m) => m[1]);
  const all = new Set([...kinds, ...bare]);
  assert.ok(all.has('request') && all.has('wake') && all.has('balance-reading'), [...all].join(', '));
  const found = [];
  for (const f of (await readdir(SHIM)).filter((x) => x.endsWith('.js') && x !== 'events.js')) {
    const text = await readFile(join(SHIM, f), 'utf8');
    for (const m of text.matchAll(/kind: '([a-z-]+)'/g)) if (all.has(m[1])) found.push(`${f}: ${m[0]}`);
  }
  assert.deepEqual(found, []);
});

test('the shell\'s own events: a probe, the backup, model info, a pool, a restored route', () => {
  const c = { provider: 'p', model: 'm' };
  assert.deepEqual(probeResultEvent(c), { kind: 'probe-result', channel: c, ok: true });
  assert.deepEqual(probeResultEvent(c, { code: 'X' }), { kind: 'probe-result', channel: c, ok: false, failure: { code: 'X' } });
  assert.deepEqual(setBackupEvent(), { kind: 'set-backup' });
  assert.deepEqual(modelInfoEvent(c, { efforts: ['low'] }), { kind: 'model-info', channel: c, known: true, efforts: ['low'] });
  assert.deepEqual(modelInfoEvent(c, { contextWindow: 8192 }), { kind: 'model-info', channel: c, known: true, efforts: [], contextWindow: 8192 });
  assert.deepEqual(modelInfoEvent(c, { contextWindow: 0 }), { kind: 'model-info', channel: c, known: true, efforts: [] }, 'no window the host did not declare');
  assert.deepEqual(modelInfoEvent(c, { error: { code: 'UNKNOWN_MODEL' } }), { kind: 'model-info', channel: c, known: false, efforts: [], code: 'UNKNOWN_MODEL' });
  assert.deepEqual(modelInfoEvent(c, { error: new Error('x') }), { kind: 'model-info', channel: c, known: false, efforts: [] });
  assert.deepEqual(setPoolEvent('a', 'off'), { kind: 'set-pool', agent: 'a', mode: 'off' });
  assert.deepEqual(setPoolEvent('a', 'main'), { kind: 'set-pool', agent: 'a', mode: 'pool', pool: 'main' });
  assert.deepEqual(restoreRouteEvent('a', { home: c }), { kind: 'restore-route', agent: 'a', home: c });
});

test('requestEvent keeps provider, model and effort, nothing else', () => {
  const ev = requestEvent({ agent: { id: 's1' } }, { provider: 'p', model: 'm', reasoningEffort: 'high', temperature: 0.3, maxTokens: 9 });
  assert.deepEqual(ev, { kind: 'request', agent: 's1', proposed: { provider: 'p', model: 'm' }, reasoningEffort: 'high' });
});

test('failureOf keeps what the classifier needs and drops the rest', () => {
  assert.deepEqual(failureOf({ code: 'RATE_LIMIT', message: 'x'.repeat(5000), status: 429, providerRetryAfterMs: 1500.4, requestId: 'r' }),
    { code: 'RATE_LIMIT', message: 'x'.repeat(2000), status: 429, providerRetryAfterMs: 1500 });
  assert.deepEqual(failureOf({ message: 'no code' }), { code: 'UNKNOWN', message: 'no code' });
  assert.deepEqual(failureOf({ code: 'X', status: -1, providerRetryAfterMs: NaN }), { code: 'X' });
});

test('hostRetryOf maps the host policy, or nothing', () => {
  assert.equal(hostRetryOf(undefined), undefined);
  assert.deepEqual(hostRetryOf({ mode: 'normal', maxRetries: 5, retryableCodes: ['RATE_LIMIT'], initialDelayMs: 1 }),
    { mode: 'normal', maxRetries: 5, retryableCodes: ['RATE_LIMIT'] });
  assert.deepEqual(hostRetryOf({ mode: 'always' }), { mode: 'always', retryableCodes: [] });
});

test('requestErrorEvent carries phase and draw', () => {
  const ev = requestErrorEvent({ agent: { id: 's' }, provider: 'p', failure: { code: 'SERVER' } }, 'after-host', 42);
  assert.deepEqual(ev, { kind: 'request-error', agent: 's', provider: 'p', failure: { code: 'SERVER' }, phase: 'after-host', rand: 42 });
});

test('requestEvent carries the measured context; the host\'s token meter measures it, or nothing does', () => {
  const agent = { id: 'a1', session: { id: 's' } };
  const proposed = { provider: 'p', model: 'm' };
  assert.equal(requestEvent({ agent }, proposed, 300000).contextTokens, 300000);
  for (const bad of [undefined, 0, -1, NaN, '12', Infinity]) {
    assert.equal('contextTokens' in requestEvent({ agent }, proposed, bad), false, String(bad));
  }
  const meter = { measure: (session) => ({ totalTokens: session.id === 's' ? 4321 : 0 }) };
  assert.equal(contextTokensOf({ get: (n) => (n === 'tokenMeter' ? meter : undefined) }, agent), 4321);
  assert.equal(contextTokensOf({ get: () => undefined }, agent), undefined, 'no meter');
  assert.equal(contextTokensOf({ get: () => ({ measure: () => { throw new Error('replay'); } }) }, agent), undefined, 'a failing measure');
  assert.equal(contextTokensOf({ get: () => meter }, { id: 'a1' }), undefined, 'no session');
});
