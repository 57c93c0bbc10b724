import { test } from 'node:test';
import assert from 'node:assert/strict';
import { failureOf, hostRetryOf, requestErrorEvent, requestEvent } from '../events.js';

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
