// Picker contents, the chip's text and tone, the dock's lines, and the
// countdown formatting (menu.cjs, status.cjs, countdown.cjs).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { menuItems, CHAIN_ORDER } = require('../menu.cjs');
const { nextTarget, chipView, dockView } = require('../status.cjs');
const { countdown, age, hostNow } = require('../countdown.cjs');

const answer = {
  chain: ['deepseek-official/deepseek-v4-flash', 'mock/mock-b'],
  backup: null,
  candidates: [
    { channel: 'mock/mock-a', source: 'adapter' },
    { channel: 'mock/mock-b', source: 'chain' },
    { channel: 'deepseek-official/deepseek-v4-pro', source: 'adapter', name: 'DeepSeek-V4-Pro' },
    { channel: 'deepseek-official/deepseek-v4-flash', source: 'chain' },
  ],
};

test('menu: Chain order first and selected without a backup; chain in order, then the rest', () => {
  const { items, selectedId } = menuItems(answer, 'en');
  assert.equal(selectedId, CHAIN_ORDER);
  assert.deepEqual(items.filter((i) => !i.type).map((i) => i.channel), [null, 'deepseek-official/deepseek-v4-flash', 'mock/mock-b', 'mock/mock-a', 'deepseek-official/deepseek-v4-pro']);
  assert.equal(items.find((i) => i.channel === 'mock/mock-b').hint, 'chain #2');
  assert.equal(items.find((i) => i.channel === 'deepseek-official/deepseek-v4-pro').hint, 'DeepSeek-V4-Pro');
  assert.equal(items[1].label, 'Chain order');
});

test('menu: the backup is the selected item; Chinese labels; loading before candidates', () => {
  assert.equal(menuItems({ ...answer, backup: 'mock/mock-a' }, 'zh').selectedId, 'mock/mock-a');
  assert.equal(menuItems(answer, 'zh').items[1].label, '按链顺序');
  const loading = menuItems(undefined, 'en').items;
  assert.equal(loading.at(-1).text, 'Checking models…');
});

const NOW = 1_000_000;
const status = (over = {}) => ({ chain: ['p/a', 'p/b', 'q/c'], backup: null, channels: [], session: { route: 'p/a', home: null, giveUp: null }, ...over });

// The session view is the module's (policy/view.go, tested there): the chip
// renders its next target, its tone and a give-up, and derives none of them.
const view = (session) => status({ session: { route: 'p/a', home: null, next: null, avoided: false, giveUp: null, ...session } });

test('chip: the next target the module names, as a backup or the next channel', () => {
  assert.deepEqual(nextTarget(view({ next: { channel: 'p/b', via: 'chain' } })), { channel: 'p/b', via: 'chain' });
  assert.equal(chipView(view({ next: { channel: 'p/b', via: 'chain' } }), NOW, 'en').text, 'Next: p/b');
  assert.equal(chipView(view({ next: { channel: 'q/c', via: 'backup' } }), NOW, 'en').text, 'Backup: q/c');
  assert.equal(chipView(view({ next: { channel: 'q/c', via: 'backup' } }), NOW, 'zh').text, '备用：q/c');
  assert.equal(chipView(view({ next: { channel: 'p/a', via: 'home' }, route: 'q/c', home: 'p/a' }), NOW, 'en').text, 'Next: p/a');
  assert.equal(nextTarget(view({})), undefined);
  assert.equal(chipView(view({}), NOW, 'en').text, 'No failover target');
  // A status without the session view (an older host) shows no target rather than a guess.
  assert.equal(nextTarget(status({ session: { route: 'p/a' }, backup: 'q/c' })), undefined);
});

test('chip tone: amber while the module says the session\'s channel (or the one it left) is avoided, red after a give-up', () => {
  assert.equal(chipView(view({}), NOW, 'en').tone, 'ok');
  assert.equal(chipView(view({ avoided: true }), NOW, 'en').tone, 'warn');
  const gaveUp = chipView(view({ avoided: true, giveUp: { reason: 'budget-exhausted' } }), NOW, 'en');
  assert.deepEqual([gaveUp.tone, gaveUp.text], ['error', 'Gave up: failover budget spent']);
});

test('dock: every channel with its state and a live countdown; providers apart; the last decision', () => {
  const v = dockView(status({
    backup: 'q/c',
    channels: [
      { channel: 'p/a', state: 'open', failures: 3, openUntilMs: NOW + 65_000, lastCode: 'RATE_LIMIT' },
      { channel: 'p/b', state: 'half-open', failures: 0, openUntilMs: NOW - 1 },
      { channel: 'p/*', state: 'open', failures: 0, openUntilMs: NOW + 3_600_000 },
    ],
    lastDecision: { at: new Date(NOW - 42_000).toISOString(), type: 'failover', to: 'p/b', code: 'RATE_LIMIT' },
  }), NOW, 'en');
  assert.deepEqual(v.channels.map((l) => [l.channel, l.state, l.text]), [
    ['p/a', 'open', 'open · 1:05'], ['p/b', 'half-open', 'half-open · probing'], ['q/c', 'healthy', 'healthy'],
  ]);
  assert.deepEqual(v.providers.map((l) => [l.provider, l.text]), [['p', 'open · 1:00:00']]);
  assert.equal(v.backup, 'q/c');
  assert.equal(v.last, 'failover → p/b (RATE_LIMIT) · 42s ago');
});

test('slow channels: the dock colours and words them, the picker says so (EN, ZH)', () => {
  const st = status({
    chain: ['p/a', 'p/b', 'q/c'],
    channels: [{ channel: 'p/a', state: 'closed', failures: 0, openUntilMs: 0 }, { channel: 'p/b', state: 'open', failures: 3, openUntilMs: NOW + 5000 }],
    slow: [{ channel: 'p/a', state: 'slow', firstTokenMs: 7049, untilMs: NOW + 9000 }, { channel: 'p/b', state: 'slow', firstTokenMs: 9000 }, { channel: 'q/c', state: 'half-open', firstTokenMs: 8000 }],
  });
  const lines = (loc) => dockView(st, NOW, loc).channels.map((l) => [l.channel, l.state, l.text]);
  assert.deepEqual(lines('en'), [['p/a', 'slow', 'slow · first token 7.0 s'], ['p/b', 'open', 'open · 0:05'], ['q/c', 'slow', 'slow · probing']]);
  assert.deepEqual(lines('zh').map((l) => l[2]), ['缓慢 · 首字 7.0 秒', '熔断 · 0:05', '缓慢 · 探测中']);
  const items = menuItems({ ...answer, slow: [{ channel: 'mock/mock-b', state: 'slow', firstTokenMs: 9000 }] }, 'en').items;
  const b = items.find((i) => i.channel === 'mock/mock-b');
  assert.equal(b.hint, 'chain #2 · slow');
  assert.equal(b.slow, true);
  assert.equal(items.find((i) => i.channel === 'mock/mock-a').slow, false);
  assert.equal(menuItems({ ...answer, slow: [{ channel: 'mock/mock-a', state: 'slow' }] }, 'zh').items.find((i) => i.channel === 'mock/mock-a').hint, '缓慢');
});

test('countdown and age formatting', () => {
  assert.deepEqual([0, 1, 999, 1000, 59_001, 60_000, 65_000, 3_599_000, 3_600_000, 3_723_000, -5].map(countdown),
    ['0:00', '0:01', '0:01', '0:01', '1:00', '1:00', '1:05', '59:59', '1:00:00', '1:02:03', '0:00']);
  assert.deepEqual([0, 59_999, 60_000, 3_600_000, 90_000_000].map(age), ['0s', '59s', '1m', '1h', '1d']);
  assert.equal(hostNow({ nowMs: 5000 }, 100, 1100), 6000, 'the host clock plus the time since the answer');
  assert.equal(hostNow(undefined, 0, 42), 42);
});

const { quotaItems, quotaChoice } = require('../menu.cjs');
const quota = { enabled: true, defaultEnabled: true, source: 'default', pool: null, poolSource: 'default', pools: ['main', 'spare'] };

test('quota items: none without quota rules; switch and pool sections with their state and source', () => {
  assert.deepEqual(quotaItems(undefined, 'en'), []);
  const items = quotaItems(quota, 'en');
  assert.deepEqual(items.filter((i) => i.type === 'label').map((i) => i.text), ['Quota retry: On (default)', 'Pool: the chain (default)']);
  assert.deepEqual(items.filter((i) => i.quota).map((i) => [i.quota, i.label, i.current]), [['on', 'On', false], ['off', 'Off', false], ['default', 'Default (On)', true]]);
  assert.deepEqual(items.filter((i) => i.pool).map((i) => [i.pool, i.current]), [['main', false], ['spare', false], ['off', false], ['default', true]]);
  const set = quotaItems({ ...quota, enabled: false, source: 'session', pool: 'spare', poolSource: 'session' }, 'en');
  assert.equal(set.find((i) => i.current && i.quota).quota, 'off');
  assert.equal(set.find((i) => i.current && i.pool).pool, 'spare');
  assert.equal(set.find((i) => i.id === 'pool-heading').text, 'Pool: spare (this session)');
  const off = quotaItems({ ...quota, poolSource: 'off' }, 'en');
  assert.equal(off.find((i) => i.current && i.pool).pool, 'off');
  const inferred = quotaItems({ ...quota, pool: 'main', poolSource: 'inferred' }, 'en');
  assert.equal(inferred.find((i) => i.id === 'pool-heading').text, 'Pool: main (from its route)');
  assert.equal(inferred.find((i) => i.current && i.pool).pool, 'default', 'an inferred pool is not a session choice');
  // A fork's settings taken from its parent: said so, and ticked as its own.
  const inherited = quotaItems({ ...quota, enabled: false, source: 'inherited', pool: 'spare', poolSource: 'inherited' }, 'en');
  assert.deepEqual(inherited.filter((i) => i.type === 'label').map((i) => i.text),
    ['Quota retry: Off (from its parent session)', 'Pool: spare (from its parent session)']);
  assert.deepEqual([inherited.find((i) => i.current && i.quota).quota, inherited.find((i) => i.current && i.pool).pool], ['off', 'spare']);
  assert.equal(quotaItems({ ...quota, source: 'inherited' }, 'zh').find((i) => i.id === 'quota-heading').text, '额度重试：开（继承自上级会话）');
});

test('quota items in Chinese; ids map to the commands\' writes, a backup id to none', () => {
  const zh = quotaItems(quota, 'zh');
  assert.equal(zh.find((i) => i.id === 'quota-heading').text, '额度重试：开（默认）');
  // Off is the seed's `off`: the session never changes provider for a spent allowance, a chain or not.
  assert.equal(quotaItems(quota, 'en').find((i) => i.pool === 'off').label, 'Off (never changes provider)');
  assert.equal(zh.find((i) => i.pool === 'off').label, '关（不更换服务商）');
  const ids = quotaItems(quota, 'en').filter((i) => !i.type).map((i) => quotaChoice(i.id));
  assert.deepEqual(ids[0], { endpoint: 'set-quota', value: 'on' });
  assert.deepEqual(ids[3], { endpoint: 'set-pool', value: 'main' });
  assert.equal(quotaChoice('mock/mock-a'), undefined);
  assert.equal(quotaChoice(CHAIN_ORDER), undefined);
});

test('settings card: reconnect\'s wait presets, custom for any other value; persistent goes into the section', () => {
  const { waitChoice, WAIT_PRESETS, draftOf, sectionOf } = require('../settings-card.cjs');
  assert.deepEqual(WAIT_PRESETS, [1000, 2000, 5000, 10000, 30000, 60000, 120000]);
  assert.equal(waitChoice('60000'), '60000');
  assert.equal(waitChoice('45000'), 'custom');
  const d = draftOf({ failureThreshold: 3, cooldownMs: 60000, backoffMaxMs: 60000, recovery: 'return', persistent: true, chain: [] });
  assert.equal(d.persistent, true);
  assert.deepEqual(sectionOf(d), { failureThreshold: 3, cooldownMs: 60000, backoffMaxMs: 60000, recovery: 'return', persistent: true, retryUnknown: true, chain: [] });
});

test('settings card: reconnect\'s unknown-error toggle and cap go into the section; the module\'s refusal lands on the cap\'s field', () => {
  const { draftOf, sectionOf, fieldOf } = require('../settings-card.cjs');
  const { translate } = require('../i18n.cjs');
  const held = { failureThreshold: 3, cooldownMs: 60000, recovery: 'return', persistent: true, retryUnknown: false, unknownMaxRetries: 2, chain: [] };
  const d = draftOf(held);
  assert.deepEqual([d.retryUnknown, d.unknownMaxRetries], [false, '2']);
  const out = sectionOf(d);
  assert.deepEqual([out.retryUnknown, out.unknownMaxRetries], [false, 2]);
  // Switched back on from the card; a count that does not parse goes to the module as typed, to be named there.
  assert.equal(sectionOf({ ...d, retryUnknown: true }).retryUnknown, true);
  assert.equal(sectionOf({ ...d, unknownMaxRetries: '2.5' }).unknownMaxRetries, '2.5');
  assert.equal(fieldOf('config key "unknownMaxRetries": must be between 0 and 1000'), 'unknownMaxRetries');
  // Cleared: unset, so the module's default (3) applies; a section without the keys reads as the default (on).
  assert.equal('unknownMaxRetries' in sectionOf({ ...d, unknownMaxRetries: ' ' }), false);
  assert.equal(draftOf({}).retryUnknown, true);
  for (const k of ['settings.retryUnknown', 'settings.retryUnknown.on', 'settings.retryUnknown.off', 'settings.hint.retryUnknown', 'settings.unknownMaxRetries', 'settings.hint.unknownMaxRetries']) {
    assert.notEqual(translate('en', k), k);
    assert.notEqual(translate('zh', k), k);
  }
});

test('settings card: a wait left unset stays unset, so persistent from the card alone gets its 60 s cap', () => {
  const { waitChoice, draftOf, sectionOf, DEFAULT_WAIT_MS } = require('../settings-card.cjs');
  const { translate } = require('../i18n.cjs');
  // The section the host hands the card when neither the row nor the user set the wait.
  const d = draftOf({ failureThreshold: 3, cooldownMs: 60000, recovery: 'return', persistent: false, chain: [] });
  assert.equal(d.backoffMaxMs, '');
  assert.equal(waitChoice(d.backoffMaxMs), 'default', 'shown as the default, not as a 30 s the user picked');
  const on = sectionOf({ ...d, persistent: true });
  assert.equal(on.persistent, true);
  assert.equal('backoffMaxMs' in on, false, 'no backoffMaxMs written: the module picks 60 s for persistent');
  assert.deepEqual(DEFAULT_WAIT_MS, { plain: 30000, persistent: 60000 });
  assert.equal(translate('en', 'settings.wait.default', { wait: '1 min' }), 'Default (1 min)');
  assert.equal(translate('zh-CN', 'settings.wait.default', { wait: '1 分钟' }), '默认（1 分钟）');
  // A wait the user picked is written as picked, persistent or not.
  assert.equal(sectionOf({ ...d, persistent: true, backoffMaxMs: '30000' }).backoffMaxMs, 30000);
  assert.equal(waitChoice('  '), 'default');
});

test('chip: enabled: false in the row (the host answers OFF) says the plugin is off, in English and Chinese', () => {
  const { chipReason } = require('../status.cjs');
  const off = { connection: true, session: 's1', live: { status: undefined, error: 'OFF' } };
  assert.equal(chipReason(off, 'en'), 'Resilience: off (enabled: false)');
  assert.equal(chipReason(off, 'zh-CN'), '容灾：已关闭（总开关已关）');
  assert.equal(chipReason({ ...off, session: undefined }, 'en'), 'Resilience: off (enabled: false)', 'off before any session is opened too');
  // The other reasons are unchanged; a working status gives none.
  assert.equal(chipReason({ connection: false, session: 's1', live: {} }, 'en'), 'Resilience: no host connection');
  assert.equal(chipReason({ connection: true, session: 's1', live: { error: 'CALL_FAILED' } }, 'en'), 'Resilience: the host does not answer');
  assert.equal(chipReason({ connection: true, session: 's1', live: { status: { chain: [] } } }, 'en'), undefined);
});

test('shell call: the host\'s off answer (a success carrying off: true) becomes OFF for every caller', async () => {
  const { call } = require('../shell.cjs');
  const ctxAnswering = (result) => ({ get: (name) => (name === 'connection' ? { rpc: { call: async () => result } } : undefined) });
  const message = 'dsh-resilience is off (enabled: false in its row)';
  assert.deepEqual(await call(ctxAnswering({ ok: true, value: { off: true, message } }), 'status', {}), { ok: false, error: { code: 'OFF', message } });
  const fine = { ok: true, value: { revision: 1, chain: [] } };
  assert.equal(await call(ctxAnswering(fine), 'status', {}), fine);
});

test('each channel shows its window: the picker beside the name, the dock beside the channel', () => {
  const { windowLabel } = require('../status.cjs');
  assert.equal(windowLabel(128000), '128k');
  assert.equal(windowLabel(1000000), '1M');
  assert.equal(windowLabel(1048576), '1M');
  assert.equal(windowLabel(65536), '65.5k');
  assert.equal(windowLabel(0), undefined);
  assert.equal(windowLabel(undefined), undefined);
  const m = menuItems({ chain: ['p/a', 'p/b'], backup: null, candidates: [
    { channel: 'p/a', source: 'chain', contextWindow: 1000000 }, { channel: 'p/b', source: 'chain', contextWindow: 128000 },
    { channel: 'q/c', source: 'adapter' }] }, 'en');
  const byId = Object.fromEntries(m.items.map((i) => [i.id, i]));
  assert.equal(byId['p/a'].hint, 'chain #1 · 1M');
  assert.equal(byId['p/b'].hint, 'chain #2 · 128k');
  assert.equal(byId['q/c'].hint, undefined);
  const d = dockView({ chain: ['p/a', 'p/b'], channels: [], windows: { 'p/a': 1000000, 'p/b': 128000 } }, 0, 'en');
  assert.deepEqual(d.channels.map((l) => l.window), ['1M', '128k']);
});
