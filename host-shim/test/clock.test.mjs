import assert from 'node:assert/strict';
import { test } from 'node:test';
import { now, testOffset } from '../clock.js';
import { recordWins } from '../shared-redis.js';

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

test('Redis merge order: the higher version, then open over closed, whatever the clocks say', () => {
  const rec = (state, version, changedAtMs, extra = {}) => ({ channel: { provider: 'p', model: 'a' }, state, version, changedAtMs, opens: 0, failures: 0, ...extra });
  assert.ok(recordWins(rec('open', 5, 1), rec('closed', 4, 9e12)), 'a later transition wins over a clock far ahead');
  assert.ok(!recordWins(rec('closed', 4, 9e12), rec('open', 5, 1)));
  assert.ok(recordWins(rec('open', 5, 1), rec('closed', 5, 9e12)), 'concurrent: the open wins');
  assert.ok(!recordWins(rec('open', 5, 1), rec('open', 5, 1)), 'an equal record replaces nothing');
  assert.ok(recordWins(rec('open', 5, 1, { openUntilMs: 90 }), rec('open', 5, 1, { openUntilMs: 60 })), 'concurrent trips: the later end');
  assert.ok(!recordWins(rec('closed', 5, 1, { openUntilMs: 90 }), rec('closed', 5, 1, { openUntilMs: 60 })));
  assert.ok(recordWins(rec('open', 0, 1), undefined));
  assert.ok(recordWins(rec('open', 1, 1), rec('open', undefined, 5)), 'a record from before versions is version 0');
});
