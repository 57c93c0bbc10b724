import { test } from 'node:test';
import assert from 'node:assert/strict';
import { contextTokensOf, failureOf, hostRetryOf, requestErrorEvent, requestEvent } from '../events.js';

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
