// The headless one-line notice on a switch and a give-up (notice.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { makeNotice, noticeLine } from '../notice.js';

const failover = { type: 'failover', from: { provider: 'p', model: 'a' }, to: { provider: 'q', model: 'b' }, code: 'RATE_LIMIT', failovers: 2, maxFailovers: 4, turn: 3, step: 1 };
const giveUp = { type: 'give-up', channel: { provider: 'q', model: 'b' }, reason: 'budget-exhausted', code: 'QUOTA', failovers: 4, maxFailovers: 4, turn: 3 };

test('one line per switch and give-up, saying where', () => {
  assert.equal(noticeLine(failover), 'dsh-resilience: switched p/a → q/b (RATE_LIMIT; failover 2/4 · turn 3 step 1)');
  assert.equal(noticeLine({ type: 'spill', from: { provider: 'p', model: 'a' }, to: { provider: 'q', model: 'b' }, code: 'SERVER', failures: 2 }),
    'dsh-resilience: switched p/a → q/b for this request (SERVER ×2; spill)');
  assert.equal(noticeLine(giveUp), 'dsh-resilience: gave up on q/b: failover budget spent (QUOTA; failover 4/4 · turn 3)');
  assert.equal(noticeLine({ type: 'give-up', channel: { provider: 'q', model: 'b' }, reason: 'no-routable-fallback', code: 'QUOTA' }),
    'dsh-resilience: gave up on q/b: no channel to fail over to (QUOTA)');
  assert.equal(noticeLine({ type: 'retry' }), undefined);
});

test('printed only when enabled and headless, and never throws', () => {
  const out = [];
  const write = (l) => out.push(l);
  makeNotice({ enabled: true, headless: () => true, write })(failover);
  makeNotice({ enabled: false, headless: () => true, write })(failover);
  makeNotice({ enabled: true, headless: () => false, write })(failover);
  assert.deepEqual(out, ['dsh-resilience: switched p/a → q/b (RATE_LIMIT; failover 2/4 · turn 3 step 1)\n']);
  assert.doesNotThrow(() => makeNotice({ enabled: true, headless: () => true, write: () => { throw new Error('EPIPE'); } })(failover));
  assert.doesNotThrow(() => makeNotice({ enabled: true, headless: () => { throw new Error('no ctx'); }, write })(giveUp));
});
