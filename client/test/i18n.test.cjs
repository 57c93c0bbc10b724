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
  for (const r of ['no-routable-fallback', 'not-recoverable', 'budget-exhausted', 'recovery-timeout', 'unknown-channel']) {
    assert.notEqual(translate('en', `reason.${r}`), `reason.${r}`);
    assert.notEqual(translate('zh', `reason.${r}`), `reason.${r}`);
  }
});
