import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';

// No number the module answers may make the shim throw: a throw would skip
// the rest of the step's effects (its save, its wake timer, its events).
test('effects with out-of-range times are carried out, not thrown', () => {
  const audit = [];
  const woken = [];
  const env = {
    ctx: { emit() {} }, audit: { write: (r) => audit.push(r) }, logger: { info() {}, warn() {} },
    scheduleWake: (at) => woken.push(at), probe() {}, healthChanged() {},
  };
  const channel = { provider: 'a/b', model: 'c' };
  for (const openUntilMs of [2 ** 53, 2 ** 53 - 1, 8.64e15 + 1, Number.MAX_VALUE, -1]) {
    assert.doesNotThrow(() => carryOut([
      { kind: 'circuit', channel, from: 'closed', to: 'open', cause: 'QUOTA', openUntilMs },
      { kind: 'schedule-wake', atMs: openUntilMs },
    ], env));
  }
  assert.equal(woken.length, 5, 'every wake after a huge time still ran');
  assert.deepEqual(audit[0].channel, { provider: 'a/b', model: 'c' }, 'records carry the channel unambiguously');
  assert.equal(audit[0].openUntil, undefined);
});
