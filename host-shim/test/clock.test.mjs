import assert from 'node:assert/strict';
import { test } from 'node:test';
import { now, testOffset } from '../clock.js';

test('the module clock starts at the wall clock and does not follow a wall step', (t) => {
  assert.ok(Math.abs(now() - Date.now()) < 60_000, 'near the wall clock at start');
  const before = now();
  t.mock.method(Date, 'now', () => before - 600_000); // the wall clock stepped back 10 minutes
  assert.ok(now() >= before, 'the module clock went back with the wall');
});

test('the test clock offset is a whole number of ms within a day, else none', () => {
  assert.equal(testOffset('600000'), 600_000);
  assert.equal(testOffset('-600000'), -600_000);
  for (const bad of [undefined, '', 'ten', '1.5', String(2 * 86_400_000)]) assert.equal(testOffset(bad), 0, String(bad));
});
