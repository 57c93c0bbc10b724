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
  // The records of such times (no openUntil beyond a JavaScript date) and
  // their channels as objects are the module's: plugin/codec/audit_test.go.
});

// Issue #17: a give-up and a spill are announced; a wait-cut reaches the
// shell's cut.
test('give-up, spill and wait-cut are carried out', () => {
  const audit = [];
  const emitted = [];
  const cut = [];
  const saves = [];
  const env = {
    ctx: { emit: (e, p) => emitted.push([e, p]) }, audit: { write: (r) => audit.push(r) }, logger: { info() {}, warn() {} },
    scheduleWake() {}, probe() {}, healthChanged: () => saves.push(audit.length), cutWait: (agent) => cut.push(agent),
  };
  const flash = { provider: 'deepseek', model: 'flash' };
  const secondary = { provider: 'tokenplan', model: 'secondary' };
  carryOut([
    { kind: 'give-up', agent: 'a1', channel: secondary, reason: 'recovery-timeout', code: 'RATE_LIMIT',
      tried: [{ channel: flash, code: 'RATE_LIMIT' }, { channel: secondary, code: 'RATE_LIMIT' }] },
    { kind: 'spill', agent: 'a1', from: flash, to: secondary, code: 'SERVER', failures: 2 },
    { kind: 'wait-cut', agent: 'a1', channel: flash },
  ], env);
  // Their records (give-up's tried, spill's failures) are the module's:
  // plugin/codec/audit_test.go.
  assert.deepEqual(emitted.map(([e]) => e), ['dsh-resilience/give-up', 'dsh-resilience/spill']);
  assert.deepEqual(cut, ['a1']);
  // The spill's channel stays closed, its burst grown: the health is saved so
  // the next process goes on from it (issue #17 item 7).
  assert.equal(saves.length, 1, 'the spill (and only it, of these) saves the health');
});

// Issue #18: effects go to subscribers by role, each effect to all of them in
// the order registered; a view's failure never costs the others their effect.
test('each effect goes to every subscriber in order; a failing view costs nothing', async () => {
  const { deliver } = await import('../effects.js');
  const seen = [];
  const warned = [];
  const subscribers = [
    { role: 'web view', view: true, effect: (fx) => { seen.push(['view', fx.kind]); throw new Error('page broke'); } },
    { role: 'shell', effect: (fx) => seen.push(['shell', fx.kind]) },
    { role: 'audit log', effect: (fx) => seen.push(['audit', fx.kind]) },
  ];
  deliver([{ kind: 'schedule-wake', atMs: 1 }, { kind: 'probe', channel: { provider: 'p', model: 'm' } }], subscribers,
    { warn: (...a) => warned.push(a) });
  assert.deepEqual(seen, [['view', 'schedule-wake'], ['shell', 'schedule-wake'], ['audit', 'schedule-wake'],
    ['view', 'probe'], ['shell', 'probe'], ['audit', 'probe']]);
  assert.equal(warned.length, 2, 'the view\'s failure is logged, once per effect');
});

// Issue #33: the audit record and log line are the module's; the shim writes
// them as given, adding only the host's turn and step where the module asks.
test('an effect\'s audit is written as the module gave it; one without is not audited', async () => {
  const { auditSubscriber } = await import('../effect-audit.js');
  const written = [];
  const logged = [];
  const noticed = [];
  const audit = auditSubscriber({
    audit: { write: (r) => written.push(r) }, logger: { info: (...a) => logged.push(['info', ...a]), warn: (...a) => logged.push(['warn', ...a]) },
    where: (agent) => (agent === 'a1' ? { turn: 2, step: 7 } : {}), notice: (r) => noticed.push(r.type),
  });
  const record = { type: 'failover', agent: 'a1', from: { provider: 'p', model: 'a' }, to: { provider: 'q', model: '100%s' }, code: 'SERVER', class: 'transient' };
  audit(/** @type {any} */ ({ kind: 'failover', audit: { record, log: { level: 'info', text: 'failover p/a -> q/100%s' }, hostTurn: true } }));
  audit(/** @type {any} */ ({ kind: 'unroutable', audit: { record: { type: 'unroutable', keys: [] }, log: { level: 'warn', text: 'w' } } }));
  audit(/** @type {any} */ ({ kind: 'probe', audit: { record: { type: 'probe' } } }));
  audit(/** @type {any} */ ({ kind: 'schedule-wake', atMs: 1 }));
  assert.deepEqual(written, [{ ...record, turn: 2, step: 7 }, { type: 'unroutable', keys: [] }, { type: 'probe' }]);
  assert.deepEqual(logged, [['info', '%s', 'failover p/a -> q/100%s'], ['warn', '%s', 'w']], 'the text is never a format');
  assert.deepEqual(noticed, ['failover']);
});
