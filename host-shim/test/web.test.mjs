// The web client's host half (web.js) and live reconfiguration
// (the engine's reconfigure), on the real policy module: the long poll, the return
// record, the session view, candidates checked with model info, the rows'
// audit records, the module's own config check.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModule, Engine as Policy } from '../engine.js';
import { reasonOf, refuse, WebHalf } from '../web.js';
import { tapAudit } from '../audit-tap.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const quiet = { warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });

function half(over = {}) {
  const records = [];
  const row = over.row ?? { chain: CHAIN };
  const policy = new Policy(compiled, row, quiet, (r) => records.push(r));
  let backup;
  const web = new WebHalf({
    auditPath: over.auditPath ?? '/nonexistent/audit.jsonl',
    rowPolicyConfig: row,
    backup: () => backup,
    setBackup: async (c) => { backup = c; return undefined; },
    applyConfig: (next) => policy.reconfigure(next),
  });
  web.deps.policy = policy;
  const log = { write: (r) => { records.push(r); return Promise.resolve(); }, flush: () => Promise.resolve(), failures: 0 };
  // As index.js wires it: every record answers the long poll; the page reads none.
  const audit = tapAudit(log, [() => web.changed()]);
  return { web, policy, records, audit, report: (r) => audit.write(r) };
}

const quota = { kind: 'request-error', agent: 'session-s1', provider: 'p', phase: 'before-host', rand: 0, failure: { code: 'QUOTA', message: 'Insufficient Balance', status: 402 } };

test('status long poll: answers at once when behind, else when an effect arrives; the last decision is the effect\'s', async () => {
  const { web } = half();
  const first = await web.watch(undefined, undefined);
  let answered;
  const waiting = web.watch(first.revision, undefined).then((s) => { answered = s; });
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(answered, undefined, 'nothing changed: still waiting');
  // The effect with its record, as the module gives it (plugin/codec/audit.go).
  const record = { type: 'failover', agent: 'session-s1', from: CHAIN[0], to: CHAIN[1], code: 'QUOTA', class: 'quota', failovers: 1, maxFailovers: 4 };
  web.effect({ kind: 'failover', agent: 'session-s1', from: CHAIN[0], to: CHAIN[1], code: 'QUOTA', class: 'quota', failovers: 1,
    audit: { record } });
  await waiting;
  assert.equal(answered.revision, first.revision + 1);
  assert.equal(answered.lastDecision.type, 'failover');
  assert.equal(answered.lastDecision.to, 'p/b', 'the page reads channels as provider/model');
  web.decided({ type: 'backup', channel: CHAIN[1], source: 'web' });
  assert.equal(web.status().lastDecision.type, 'backup', 'the shim\'s own decisions are told, not read back');
});

test('an aborted long poll ends at once', async () => {
  const { web } = half();
  const s = await web.watch(undefined);
  const stop = new AbortController();
  const p = web.watch(s.revision, undefined, stop.signal);
  stop.abort();
  assert.equal((await p).revision, s.revision);
});

test('a session: its route, the channel it left, a give-up until its next request, and its return, all from the module\'s effects', async () => {
  const { carryOut } = await import('../effects.js');
  const { web, audit, policy, records } = half();
  const env = { ctx: { emit() {} }, audit, logger: { info() {}, warn() {} }, healthChanged() {}, scheduleWake() {}, probe() {}, observe: (fx) => web.effect(fx) };
  const step = (at, event) => {
    const out = policy.decide(at, event);
    carryOut(out.effects, env);
    return out;
  };
  const agent = { id: 'session-s1' };
  step(1000, { kind: 'request', agent: 'session-s1', proposed: CHAIN[0] });
  web.requested(agent);
  step(1001, quota);
  assert.equal(step(1002, { kind: 'request', agent: 'session-s1', proposed: CHAIN[0] }).verdict.model, 'b'); // the retry, sent to p/b
  web.requested(agent);
  // The browser knows the session without the prefix. A spent allowance
  // moves the session without opening p/a: a failure would send it home.
  assert.deepEqual(web.status('s1').session, { id: 's1', route: 'p/b', home: 'p/a', next: { channel: 'p/a', via: 'home' }, avoided: false, giveUp: null });
  // A failure no channel would answer differently: the module gives up, and its view says so until the next request.
  step(1003, { kind: 'request-error', agent: 'session-s1', provider: 'p', phase: 'after-host', rand: 0, failure: { code: 'INVALID_REQUEST', message: 'bad', status: 400 } });
  const gaveUp = { type: 'give-up', channel: 'p/b', reason: 'not-recoverable', code: 'INVALID_REQUEST', failovers: 1, tried: [{ channel: 'p/a', code: 'QUOTA' }, { channel: 'p/b', code: 'INVALID_REQUEST' }] };
  assert.deepEqual(web.status('session-s1').session.giveUp, gaveUp);
  // A request the shim saw go out, which the module did not step (a cold one): no return is inferred, and the give-up stands.
  web.requested(agent);
  assert.deepEqual(records.filter((r) => r.type === 'return'), [], 'no return is inferred from a request');
  assert.deepEqual(web.status('s1').session, { id: 's1', route: 'p/b', home: 'p/a', next: { channel: 'p/a', via: 'home' }, avoided: false, giveUp: gaveUp },
    'the session view is the module\'s: its last routed request and give-up, not a request the shim saw');
  // p/a is back (its probe answered): the module sends the session home and says so.
  const back = 1001 + policy.resolved.cooldownMs + 1;
  step(back, { kind: 'wake' });
  step(back, { kind: 'probe-result', channel: CHAIN[0], ok: true });
  const out = step(back + 1, { kind: 'request', agent: 'session-s1', proposed: CHAIN[0] });
  assert.deepEqual(out.effects.filter((fx) => fx.kind === 'returned').map((fx) => [fx.from, fx.to]), [[CHAIN[1], CHAIN[0]]]);
  web.requested(agent);
  assert.deepEqual(records.filter((r) => r.type === 'return').map(({ agent: a, from, to }) => ({ a, from, to })), [{ a: 'session-s1', from: 'p/b', to: 'p/a' }]);
  assert.deepEqual(web.status('s1').session, { id: 's1', route: 'p/a', home: null, next: { channel: 'p/b', via: 'chain' }, avoided: false, giveUp: null });
});

test('channels whose joined names collide are not mistaken for each other: {a/b, c} and {a, b/c}', () => {
  const { web, records, policy } = half();
  const left = { provider: 'a/b', model: 'c' };
  const target = { provider: 'a', model: 'b/c' };
  web.effect({ kind: 'failover', agent: 'session-s1', from: left, to: target, code: 'QUOTA', class: 'quota', failovers: 1 });
  web.requested({ id: 'session-s1' }); // on "a/b/c" both ways: once read as a return home
  assert.deepEqual(records.filter((r) => r.type === 'return'), []);
  // The module compares {provider, model}: the session it routed to {a, b/c} is away from {a/b, c}.
  policy.reconfigure({ chain: [left, target] });
  policy.decide(1000, { kind: 'request', agent: 'session-s1', proposed: left });
  policy.decide(1001, { ...quota, provider: 'a/b' });
  policy.decide(1002, { kind: 'request', agent: 'session-s1', proposed: left });
  const session = web.status('s1').session;
  // Shown alike to people, but a home is named only when it is not where the session is.
  assert.deepEqual([session.route, session.home, session.next?.via], ['a/b/c', 'a/b/c', 'home'], 'still away from the channel it left');
});

test('candidates: the chain and the adapters\' models, those the host cannot resolve left out', async () => {
  const { web } = half();
  const llm = {
    listProviders: () => [{ id: 'p', name: 'P' }, { id: 'q', name: 'Q' }],
    listModels: async (id) => (id === 'p' ? [{ id: 'a', name: 'A' }, { id: 'c', name: 'C' }] : [{ id: 'gone', name: 'Gone' }]),
    resolveModelInfo: async (provider, model) => { if (model === 'gone' || model === 'b') throw Object.assign(new Error('no'), { code: 'UNKNOWN_MODEL' }); return {}; },
  };
  const out = await web.candidates(llm);
  assert.deepEqual(out.candidates.map((c) => [c.channel, c.source]), [['p/a', 'chain'], ['p/c', 'adapter']]);
  assert.deepEqual(out.unknown.sort(), ['p/b', 'q/gone']);
  assert.deepEqual(out.chain, ['p/a', 'p/b']);
});

test('rows: the session\'s records and the breakers of the channels it left, from both audit generations', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'dshr-web-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.jsonl');
  const line = (r) => JSON.stringify(r) + '\n';
  await writeFile(`${path}.1`, line({ at: '2026-01-01T00:00:01Z', type: 'circuit-open', channel: 'p/a', openUntil: '2026-01-01T00:01:01Z' }) + 'not json\n');
  await writeFile(path, [
    { at: '2026-01-01T00:00:02Z', type: 'failover', agent: 'session-s1', from: 'p/a', to: 'p/b' },
    { at: '2026-01-01T00:00:03Z', type: 'failover', agent: 'session-other', from: 'p/x', to: 'p/b' },
    { at: '2026-01-01T00:00:04Z', type: 'circuit-open', channel: 'p/x' },
    { at: '2026-01-01T00:00:05Z', type: 'probe', channel: 'p/a' },
  ].map(line).join(''));
  const { web } = half({ auditPath: path });
  const { records } = await web.rows('s1');
  assert.deepEqual(records.map((r) => `${r.type} ${r.channel ?? r.to}`), ['circuit-open p/a', 'failover p/b']);
});

test('rows: a session\'s hedge records, channels as the page reads them, and whether the row hedges', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'dshr-web-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'audit.jsonl');
  await writeFile(path, [
    { at: '2026-01-01T00:00:02Z', type: 'hedge', agent: 'session-s1', from: { provider: 'p', model: 'a' }, to: { provider: 'p', model: 'b' }, afterMs: 2000, winner: 'hedge' },
    { at: '2026-01-01T00:00:03Z', type: 'hedge', agent: 'session-other', from: { provider: 'p', model: 'a' }, to: { provider: 'p', model: 'b' }, afterMs: 2000, winner: 'primary' },
  ].map((r) => JSON.stringify(r) + '\n').join(''));
  const { web, policy } = half({ auditPath: path });
  const off = await web.rows('s1');
  assert.deepEqual(off.records.map((r) => `${r.type} ${r.from} ${r.to} ${r.winner}`), ['hedge p/a p/b hedge']);
  assert.equal(off.hedging, false, 'the row does not hedge');
  policy.reconfigure({ chain: CHAIN, hedge: { afterMs: 2000 } });
  assert.equal((await web.rows('s1')).hedging, true);
});

test('the module checks a settings section with the rest of the row; reconfigure keeps channel health', () => {
  const { web, policy } = half();
  assert.match(web.problem({ failureThreshold: 0 }), /^dsh-resilience: config key "failureThreshold": /);
  assert.equal(web.problem({ failureThreshold: 2, recovery: 'stay' }), undefined);
  policy.decide(1000, { kind: 'request', agent: 'session-s1', proposed: CHAIN[0] });
  policy.decide(1001, quota);
  const open = () => policy.snapshot().channels.find((c) => c.channel.model === 'a')?.state;
  assert.equal(open(), 'open');
  web.deps.applyConfig(web.merged({ failureThreshold: 2, cooldownMs: 90000 }));
  assert.equal(policy.resolved.failureThreshold, 2);
  assert.equal(policy.resolved.cooldownMs, 90000);
  assert.equal(open(), 'open', 'the breaker survived the reconfiguration');
  assert.throws(() => policy.reconfigure({ chain: CHAIN, failureThreshold: 0 }), /config key "failureThreshold"/);
  assert.equal(policy.resolved.failureThreshold, 2, 'a refused config changes nothing');
});

test('the RPC handler never throws: unknown endpoints, bad channels and the backup path', async () => {
  const { web } = half();
  const h = web.handler(() => undefined);
  assert.equal(reasonOf(await h('nope', {})), 'UNKNOWN_ENDPOINT');
  assert.equal(reasonOf(await h('set-backup', { channel: 'no-slash' })), 'INVALID');
  const set = await h('set-backup', { channel: 'p/b' });
  assert.equal(set.ok, true);
  assert.equal(set.value.backup, 'p/b');
  assert.equal((await h('set-backup', { clear: true })).value.backup, null);
  assert.deepEqual((await h('validate', { section: { recovery: 'stay' } })).value, { problem: null });
});

// The host's schemastery, from the installed host (the shim imports it from
// the profile's packages at run time).
async function hostSchema() {
  const dir = process.env.DSH_HOST_DIR;
  if (!dir) return undefined;
  const { createRequire } = await import('node:module');
  return createRequire(join(dir, 'host', 'package.json'))('@deepseek-ai/schemastery');
}

/** A settings service with one scope: the section is the schema applied to the row's base and the user's own values. */
function fakeSettings(user) {
  let registered;
  const sub = {
    effect() {},
    settings: {
      register(ns, schema, opts) {
        registered = { ns, schema, opts };
        opts.validate?.(schema({ ...opts.base, ...user })); // as the host does with the saved section
        return { get: () => schema({ ...opts.base, ...user }), watch: () => () => {} };
      },
    },
  };
  return { sub, get registered() { return registered; } };
}

test('persistent switched on from the card alone gets the 60 s cap: the schema leaves backoffMaxMs unset', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const { web, policy } = half();
  const reports = [];
  const s = fakeSettings({ persistent: true });
  await web.serveSettings(s.sub, (r) => reports.push(r), Schema);
  const section = s.registered.schema({ ...s.registered.opts.base, persistent: true });
  assert.equal(section.backoffMaxMs, undefined, 'the schema fills no 30 s the user never chose');
  assert.equal(policy.resolved.persistent, true);
  assert.equal(policy.resolved.backoffMaxMs, 60000, "persistent's own cap, as dsh-reconnect had");
  assert.deepEqual(reports.map((r) => r.type), ['reconfigured']);
  assert.deepEqual(reports[0].keys, ['backoffMaxMs', 'persistent']);
});

test('the base layer is what Reset shows: the row\'s value, else the module\'s default; the wait stays unset', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const { web } = half();
  const s = fakeSettings({ failureThreshold: 7 });
  await web.serveSettings(s.sub, () => {}, Schema);
  const { base } = s.registered.opts;
  assert.deepEqual(base.chain, CHAIN, 'the row\'s own');
  assert.deepEqual([base.failureThreshold, base.cooldownMs, base.recovery, base.persistent, base.retryUnknown, base.unknownMaxRetries],
    [3, 60000, 'return', false, true, 3], 'the module\'s defaults where the row says nothing');
  assert.equal('backoffMaxMs' in base, false, 'unset: 30 s, or 60 s with persistent');
});

test('a card wait the user chose is kept with persistent; an untouched card reconfigures nothing', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const chosen = half();
  await chosen.web.serveSettings(fakeSettings({ persistent: true, backoffMaxMs: 10000 }).sub, () => {}, Schema);
  assert.equal(chosen.policy.resolved.backoffMaxMs, 10000);
  const untouched = half();
  const reports = [];
  await untouched.web.serveSettings(fakeSettings({}).sub, (r) => reports.push(r), Schema);
  assert.deepEqual(reports, [], 'the schema defaults say what the module runs: nothing to apply');
  assert.equal(untouched.policy.resolved.backoffMaxMs, 30000);
});

test('reconnect\'s unknown-error pair from the card: applied live, and a bad count refused by the module naming the key', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const { web, policy } = half();
  const reports = [];
  await web.serveSettings(fakeSettings({ retryUnknown: false, unknownMaxRetries: 2 }).sub, (r) => reports.push(r), Schema);
  assert.deepEqual([policy.resolved.retryUnknown, policy.resolved.unknownMaxRetries], [false, 2]);
  assert.deepEqual(reports.map((r) => r.keys), [['retryUnknown', 'unknownMaxRetries']]);
  assert.match(web.problem({ retryUnknown: false, unknownMaxRetries: 1001 }), /config key "unknownMaxRetries": must be between 0 and 1000/);
  assert.match(web.problem({ retryUnknown: 'no' }), /"retryUnknown"/);
  assert.equal(web.problem({ retryUnknown: false, unknownMaxRetries: 0 }), undefined);
});

test('the card registers before the module is up; a section saved earlier applies once it is, and a check before then asks for a moment', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const records = [];
  const module = await compiled;
  const policy = new Policy(Promise.resolve(module), { chain: CHAIN }, quiet, (r) => records.push(r)); // down until start()
  let started;
  const upNow = new Promise((resolve) => { started = resolve; });
  let kicks = 0;
  const web = new WebHalf({
    auditPath: '/nonexistent/audit.jsonl', rowPolicyConfig: { chain: CHAIN }, backup: () => undefined, setBackup: async () => undefined,
    applyConfig: (next) => policy.reconfigure(next),
    upSettled: () => upNow,
    whenUp: () => { kicks++; return upNow; },
  });
  web.deps.policy = policy;
  const s = fakeSettings({ failureThreshold: 7 });
  await web.serveSettings(s.sub, (r) => records.push(r), Schema);
  assert.equal(s.registered?.ns, 'dsh-resilience', 'registered with the module down');
  assert.equal(s.registered.schema({}).failureThreshold, 3, "the module's default, generated at build time");
  assert.equal(kicks, 0, 'registering does not bring the module up');
  assert.throws(() => s.registered.opts.validate({ failureThreshold: 7 }), /starting: save again/);
  assert.equal(kicks, 1, 'a save asks for the module');
  await policy.start();
  started(true);
  await upNow;
  await new Promise((r) => setImmediate(r));
  assert.equal(policy.resolved.failureThreshold, 7, 'the saved section applied once up');
  assert.deepEqual(records.filter((r) => r.type === 'reconfigured').map((r) => r.keys), [['failureThreshold']]);
  assert.doesNotThrow(() => s.registered.opts.validate({ failureThreshold: 7 }));
});

test('every refusal is an error the host\'s own RPC schema takes, so the browser\'s caller reads its message', async () => {
  // The host's schema (dsh-host-apiproxy), as its browser caller checks an error.
  const dir = process.env.DSH_HOST_DIR;
  if (!dir) return; // run by make test-shim, which sets it
  const { rpcErrorSchema } = await import(join(dir, 'host/node_modules/@deepseek-ai/dsh-host-apiproxy/lib/types/api/rpc.schema.js'));
  for (const code of ['INVALID', 'REFUSED', 'UNKNOWN_SESSION', 'UNKNOWN_ENDPOINT', 'INTERNAL']) {
    const r = refuse(code, 'dsh-resilience: no');
    assert.equal(rpcErrorSchema.safeParse(r.error).success, true, code);
    assert.equal(reasonOf(r), code === 'INTERNAL' ? 'internal' : code);
  }
  // And what the old shape was: a code of ours the schema refuses.
  assert.equal(rpcErrorSchema.safeParse({ code: 'INVALID', message: 'x' }).success, false);
  // The client's call() gives its callers our reason back.
  const { createRequire } = await import('node:module');
  const { call } = createRequire(import.meta.url)('../../client/shell.cjs');
  const ctx = { get: (n) => (n === 'connection' ? { rpc: { call: async () => refuse('REFUSED', 'dsh-resilience: the host cannot serve x/y') } } : undefined) };
  assert.deepEqual(await call(ctx, 'set-backup', {}), { ok: false, error: { code: 'REFUSED', message: 'dsh-resilience: the host cannot serve x/y' } });
});

test('Retry on quota from the card: only quota.defaultEnabled, merged into the row\'s own quota object', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const own = { defaultEnabled: false, longTermDelayMs: 1500, failOpen: false, exhaustedCooldownMs: 7000 };
  const { web, policy } = half({ row: { chain: CHAIN, quota: own } });
  assert.deepEqual(web.merged({ quota: { defaultEnabled: true } }).quota, { ...own, defaultEnabled: true }, 'the row\'s keys stay the row\'s');
  const reports = [];
  const s = fakeSettings({ quota: { defaultEnabled: true } });
  await web.serveSettings(s.sub, (r) => reports.push(r), Schema);
  assert.deepEqual(s.registered.opts.base.quota, { defaultEnabled: false }, 'the base is the row\'s switch');
  const q = policy.resolved.quota;
  assert.deepEqual([q.active, q.defaultEnabled, q.longTermDelayMs, q.failOpen, q.exhaustedCooldownMs], [true, true, 1500, false, 7000]);
  assert.deepEqual(reports.map((r) => r.keys), [['quota']]);
  // The card holds one quota key: more would shadow the row's; a bad value is the module's to name.
  assert.match(web.problem({ quota: { defaultEnabled: true, longTermDelayMs: 5 } }), /config key "quota\.longTermDelayMs": the settings card sets only quota\.defaultEnabled/);
  assert.match(web.problem({ quota: { defaultEnabled: 'yes' } }), /config key "quota\.defaultEnabled"/);
  assert.match(web.problem({ quota: 'on' }), /config key "quota"/);
  assert.equal(web.problem({ quota: { defaultEnabled: false } }), undefined);
});

test('Retry on quota on a row with no quota rules: off in the base adds nothing; on turns the rules on, a spent allowance waited out on its route', async (t) => {
  const Schema = await hostSchema();
  if (!Schema) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const plain = half({ row: {} });
  const untouched = [];
  const s = fakeSettings({});
  await plain.web.serveSettings(s.sub, (r) => untouched.push(r), Schema);
  assert.equal('quota' in s.registered.opts.base, false, 'no quota object in the base: an untouched card keeps the rules off');
  assert.deepEqual(untouched, [], 'nothing to apply');
  assert.equal(plain.policy.resolved.quota.active, false);
  // The host's schema makes an absent quota `{}`: saving another key must not carry it into the row.
  const other = half({ row: {} });
  await other.web.serveSettings(fakeSettings({ failureThreshold: 5 }).sub, () => {}, Schema);
  assert.equal(other.policy.resolved.failureThreshold, 5);
  assert.equal(other.policy.resolved.quota.active, false, 'no quota object added: the rules stay off');

  const { web, policy } = half({ row: {} });
  const reports = [];
  await web.serveSettings(fakeSettings({ quota: { defaultEnabled: true } }).sub, (r) => reports.push(r), Schema);
  assert.deepEqual(web.merged({ quota: { defaultEnabled: true } }).quota, { defaultEnabled: true });
  assert.deepEqual([policy.resolved.quota.active, policy.resolved.quota.defaultEnabled], [true, true]);
  assert.deepEqual(reports.map((r) => r.keys), [['quota']]);
  const ch = { provider: 'p', model: 'a' };
  policy.decide(1000, { kind: 'request', agent: 'session-s1', proposed: ch });
  const fx = policy.decide(1001, quota);
  const wait = fx.effects.find((e) => e.kind === 'quota-wait');
  assert.ok(wait, JSON.stringify(fx));
  const retry = fx.effects.find((e) => e.kind === 'retry');
  assert.deepEqual([retry?.channel, retry?.delayMs], [ch, 3600000], 'the same route, one try an hour');
});

test('a page watching a session is answered at each of its requests, which may have moved it or ended its give-up; others wait', async () => {
  const { web } = half();
  web.requested({ id: 'session-s1' });
  const { revision } = web.status();
  let mine, other;
  const waiting = web.watch(revision, 's1').then((s) => { mine = s; });
  const elsewhere = web.watch(revision, 's2').then((s) => { other = s; });
  web.requested({ id: 'session-s1' }); // nothing global changed
  await waiting;
  assert.equal(mine.revision, revision, 'answered without a new revision');
  await new Promise((r) => setImmediate(r));
  assert.equal(other, undefined, 'the page on s2 still waits');
  web.changed();
  await elsewhere;
});
