// The module's refusals in the viewer's language (problem.cjs): every
// refusal the settings card's fields can meet, worded by the module itself
// (captured from the built module), reads in Chinese with no English left.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { localizeProblem } = require('../problem.cjs');

// The module's own words for each bad value the card can send (number fields
// typed by hand; the chain and recovery come from menus, but their shapes are here too).
const REFUSALS = [
  'dsh-resilience: config key "failureThreshold": must be between 1 and 1000',
  'dsh-resilience: config key "failureThreshold": must be an integer between 0 and 2147483647',
  'dsh-resilience: config key "failureThreshold": must be an integer between 0 and 2147483647, not null (leave the key out for its default)',
  'dsh-resilience: config key "cooldownMs": must be between 0 and one week',
  'dsh-resilience: config key "cooldownMs": must be an integer between 0 and 9007199254740992',
  'dsh-resilience: config key "backoffMaxMs": must be at least backoffBaseMs and at most one day',
  'dsh-resilience: config key "recovery": must be a string',
  'dsh-resilience: config key "chain": must be an array',
  'dsh-resilience: config key "chain[0].provider": must be a non-empty string',
  'dsh-resilience: config key "chain[0].model": is required',
  'dsh-resilience: config key "chain[0]": must be an object',
  'dsh-resilience: config key "chain[1]": duplicates chain[0] (p/a)',
];

/** Latin words left, less channel names (`p/a`), numbers and the chain's own index notation. */
const latin = (s) => s.replace(/[\w.-]+\/[\w.*-]+/g, ' ').replace(/chain\[\d+\]/g, ' ').match(/[A-Za-z]{2,}/g) ?? [];

test('every refusal the card can meet reads in Chinese, the key as its field\'s label', () => {
  for (const p of REFUSALS) {
    const zh = localizeProblem('zh-CN', p);
    assert.deepEqual(latin(zh), [], `${p} → ${zh}`);
  }
  assert.equal(localizeProblem('zh', REFUSALS[0]), '“失败阈值”须在 1 到 1000 之间');
  assert.equal(localizeProblem('zh', REFUSALS[8]), '“链顺序 #1 服务商”须为非空字符串');
});

test('English, and anything not shaped like a refusal, stay word for word', () => {
  for (const p of REFUSALS) assert.equal(localizeProblem('en', p), p);
  assert.equal(localizeProblem('zh', 'the host did not answer'), 'the host did not answer');
  assert.equal(localizeProblem('zh', undefined), '');
});

test('a reason shape the table does not know keeps its English reason, with the key named', () => {
  assert.equal(localizeProblem('zh', 'config key "cooldownMs": must be prime'), '“冷却时间（毫秒）”must be prime');
});
