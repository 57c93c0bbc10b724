// Locale strings (i18n.cjs): both languages carry every key, placeholders
// match, and the host's locale id picks the language.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { STRINGS, pickLocale, translate } = require('../i18n.cjs');

test('English and Chinese have the same keys and the same placeholders', () => {
  assert.deepEqual(Object.keys(STRINGS.zh).sort(), Object.keys(STRINGS.en).sort());
  const vars = (s) => (s.match(/\{\w+\}/g) ?? []).sort();
  for (const k of Object.keys(STRINGS.en)) assert.deepEqual(vars(STRINGS.zh[k]), vars(STRINGS.en[k]), k);
});

test('the host locale id picks the language; anything else is English', () => {
  assert.deepEqual(['zh', 'zh-CN', 'ZH-tw', 'en', 'en-US', '', undefined, 'fr'].map(pickLocale), ['zh', 'zh', 'zh', 'en', 'en', 'en', 'en', 'en']);
});

test('placeholders fill; a missing variable stays visible; an unknown key shows itself', () => {
  assert.equal(translate('en', 'chip.backup', { channel: 'a/b' }), 'Backup: a/b');
  assert.equal(translate('zh-CN', 'row.return', { channel: 'a/b' }), '已回到 a/b');
  assert.equal(translate('en', 'chip.backup', {}), 'Backup: {channel}');
  assert.equal(translate('en', 'no.such.key'), 'no.such.key');
});

test('every give-up reason the policy knows has a text', () => {
  for (const r of ['no-routable-fallback', 'not-recoverable', 'budget-exhausted', 'recovery-timeout', 'unknown-channel', 'unknown-retries-spent']) {
    assert.notEqual(translate('en', `reason.${r}`), `reason.${r}`);
    assert.notEqual(translate('zh', `reason.${r}`), `reason.${r}`);
  }
});

test('the Chinese strings hold no Latin words but placeholders and the plugin\'s name', () => {
  for (const [k, v] of Object.entries(STRINGS.zh)) {
    const left = v.replace(/\{\w+\}/g, '').replace(/dsh-resilience/g, '').match(/[A-Za-z]{2,}/g);
    assert.equal(left, null, `${k}: ${v}`);
  }
});

test('decision words and ages follow the locale; an unknown decision shows as is', () => {
  const { dockView } = require('../status.cjs');
  const { age } = require('../countdown.cjs');
  const NOW = Date.parse('2026-12-01T12:00:00Z');
  const at = new Date(NOW - 90_000).toISOString();
  const st = (type) => ({ nowMs: NOW, chain: ['p/a'], channels: [], lastDecision: { at, type, to: 'p/b', code: 'QUOTA' } });
  assert.equal(dockView(st('give-up'), NOW, 'zh').last, '放弃 → p/b（QUOTA） · 1分钟前');
  assert.equal(dockView(st('give-up'), NOW, 'en').last, 'give-up → p/b (QUOTA) · 1m ago');
  assert.equal(dockView(st('something-new'), NOW, 'zh').last, 'something-new → p/b（QUOTA） · 1分钟前');
  assert.deepEqual([5_000, 120_000, 7_200_000, 172_800_000].map((ms) => age(ms, 'zh')), ['5秒', '2分钟', '2小时', '2天']);
  assert.equal(age(5_000), '5s');
});
