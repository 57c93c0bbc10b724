// The web RPC's inputs, checked where they enter: through the real handler
// (web.js) with the real quota rules and settings file behind it. Each bad
// input is answered with a clear error, nothing is written, and a reply
// never echoes more than a short excerpt.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModule, Engine as Policy } from '../engine.js';
import { QuotaRules } from '../quota.js';
import { bodyProblem, excerpt, hostKnowsSession, MAX_BODY_BYTES, MAX_BODY_DEPTH, sessionIdProblem } from '../rpc-input.js';
import { reasonOf, WebHalf } from '../web.js';

const quiet = { warn() {} };
const ROW = { probes: false, chain: [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }], pools: [{ name: 'main', routes: [{ provider: 'p', model: 'a' }] }], quota: { longTermDelayMs: 1000 } };
let compiled;
before(async () => { compiled = await compileModule(); });

async function host() {
  const dir = await mkdtemp(join(tmpdir(), 'rpc-'));
  const settingsPath = join(dir, 'quota-sessions.json');
  const policy = new Policy(compiled, ROW, quiet);
  const audit = [];
  const quota = new QuotaRules({ ctx: { get: () => undefined }, policy, settingsPath, report: (r) => audit.push(r), emit: () => {},
    lifetime: new AbortController().signal, decide: (event) => policy.decide(Date.now(), event) });
  let backup = { provider: 'p', model: 'b' };
  const live = new Set(['session-live']);
  const web = new WebHalf({
    auditPath: join(dir, 'audit.jsonl'), rowPolicyConfig: ROW, backup: () => backup,
    setBackup: async (c) => { backup = c; return undefined; }, applyConfig: () => {}, quota,
    sessionsDir: join(dir, 'sessions'),
  });
  web.deps.policy = policy;
  web.ctx = { get: (name) => (name === 'sessions' ? { get: (id) => (live.has(id) ? {} : undefined) } : undefined) };
  await mkdir(join(dir, 'sessions', '--work--', 'session-logged'), { recursive: true });
  return { web, h: web.handler(() => undefined), quota, settingsPath, audit, backup: () => backup };
}

const written = (path) => stat(path).then(() => true, () => false);

test('set-quota and set-pool: a session the host does not know is refused, nothing written', async () => {
  const { h, settingsPath, audit } = await host();
  const r = await h('set-quota', { session: 'made-up', value: 'off' });
  assert.equal(reasonOf(r), 'UNKNOWN_SESSION');
  assert.match(r.error.message, /knows no session "made-up"/);
  assert.equal(reasonOf(await h('set-pool', { session: 'made-up', value: 'main' })), 'UNKNOWN_SESSION');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await written(settingsPath), false);
  assert.deepEqual(audit, []);
});

test('set-quota: a live session, a logged one (with or without the prefix) and one with a setting are known', async () => {
  const { h, quota } = await host();
  for (const session of ['live', 'session-live', 'logged', 'session-logged']) {
    const r = await h('set-quota', { session, value: 'off' });
    assert.equal(r.ok, true, `${session}: ${JSON.stringify(r.error)}`);
  }
  await quota.settings.queue;
  assert.equal(quota.settings.get('live').quota, 'off');
  assert.equal((await h('set-pool', { session: 'live', value: 'main' })).ok, true, 'now also known by its setting');
});

test('a 1 MB session id or value is refused with a short excerpt, nothing written', async () => {
  const { h, settingsPath, audit } = await host();
  const big = 'x'.repeat(1 << 20);
  for (const [endpoint, payload] of [['set-quota', { session: big, value: 'off' }], ['set-pool', { session: 'live', value: big }],
    ['set-quota', { session: 'live', value: 'o'.repeat(10 << 20) }], ['rows', { session: big }], ['status', { session: big }],
    ['set-backup', { channel: big }], ['set-backup', { channel: { provider: big, model: 'm' } }], [big, {}],
    ['validate', { section: { chain: Array(20000).fill({ provider: 'p', model: 'a' }) } }]]) {
    const r = await h(endpoint, payload);
    assert.equal(r.ok, false, endpoint.slice(0, 20));
    assert.ok(JSON.stringify(r).length < 300, `${endpoint.slice(0, 20)}: a reply of ${JSON.stringify(r).length} chars`);
  }
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await written(settingsPath), false);
  assert.deepEqual(audit, []);
});

test('session ids: bounded, well-formed, never a path or control characters', async () => {
  const { h } = await host();
  for (const bad of ['', '../../etc', 'a/b', 'a b', 'a\nb', '-x', 42, null, { id: 'live' }, ['live']]) {
    const r = await h('set-quota', { session: bad, value: 'off' });
    assert.equal(reasonOf(r), 'INVALID', JSON.stringify(bad));
  }
  assert.equal(sessionIdProblem('session-0b9c1d2e-aaaa-4bbb-8ccc-123456789abc'), undefined);
  assert.match(sessionIdProblem('s'.repeat(129)), /longer than 128/);
  assert.equal(await hostKnowsSession('..', { sessionsDir: '/' }), false, 'well-formedness is checked first');
});

test('set-backup: a channel missing, null, empty or under __proto__ is refused and the backup kept; clearing is explicit', async () => {
  const { h, backup } = await host();
  const bodies = [{}, { channel: null }, { channel: '' }, JSON.parse('{"__proto__": {"channel": "p/a"}}'),
    JSON.parse('{"channel": {"__proto__": {"provider": "p", "model": "a"}}}'), null, 'p/a', { channel: 7 }, { channel: 'no-slash' }, { clear: 'yes' }];
  for (const body of bodies) {
    const r = await h('set-backup', body);
    assert.equal(reasonOf(r), 'INVALID', JSON.stringify(body));
    assert.deepEqual(backup(), { provider: 'p', model: 'b' }, `${JSON.stringify(body)} kept the backup`);
  }
  assert.match((await h('set-backup', {})).error.message, /no channel \(send \{clear: true\} to clear the backup\)/);
  assert.equal((await h('set-backup', { channel: 'p/a' })).value.backup, 'p/a');
  assert.equal((await h('set-backup', { clear: true })).value.backup, null);
  assert.equal(backup(), undefined);
});

test('excerpt: at most 40 characters of anything, control characters masked', () => {
  assert.equal(excerpt('short'), '"short"');
  assert.equal(excerpt('y'.repeat(1000)), `"${'y'.repeat(40)}…"`);
  assert.equal(excerpt('a\u0000b'), '"a?b"');
  assert.equal(excerpt(undefined), '"undefined"');
  const cyclic = {};
  cyclic.self = cyclic;
  assert.equal(excerpt(cyclic), '"[object Object]"');
});

/** v nested n arrays deep. */
const nest = (n, v = 0) => { let x = v; for (let i = 0; i < n; i++) x = [x]; return x; };

test('every endpoint: a body nested 50,000 deep or larger than the bound is refused naming the field, nothing written', async () => {
  const { h, settingsPath, audit, backup } = await host();
  const deep = nest(50_000);
  for (const [endpoint, body, field] of [
    ['validate', { section: { chain: deep } }, /section\.chain\[0\]\[0\]/],
    ['validate', { section: { chain: [{ provider: 'p', model: 'a', x: deep }] } }, /section\.chain\[0\]\.x\[0\]/],
    ['set-backup', { channel: deep }, /channel\[0\]/],
    ['set-quota', { session: 'live', value: deep }, /value\[0\]/],
    ['set-pool', { session: deep, value: 'main' }, /session\[0\]/],
    ['status', { since: deep }, /since\[0\]/],
    ['rows', { session: 'live', more: deep }, /more\[0\]/],
    ['report', { window: deep }, /window\[0\]/],
    ['candidates', deep, /^dsh-resilience: \[0\]\[0\]/],
    ['nope', { 'a b': deep }, /\["a b"\]\[0\]/],
  ]) {
    const r = await h(endpoint, body);
    assert.equal(reasonOf(r), 'INVALID', `${endpoint}: ${JSON.stringify(r.error)}`);
    assert.match(r.error.message, field, endpoint);
    assert.match(r.error.message, new RegExp(`nests deeper than ${MAX_BODY_DEPTH} levels`), endpoint);
    assert.ok(r.error.message.length < 300, `${endpoint}: a short message`);
  }
  const large = await h('validate', { section: { chain: [{ provider: 'p', model: 'x'.repeat(MAX_BODY_BYTES) }] } });
  assert.equal(reasonOf(large), 'INVALID');
  assert.match(large.error.message, /section\.chain\[0\]\.model: the body is larger than \d+ bytes/);
  const wide = await h('set-backup', { channel: new Array(10_000_000).fill(0) });
  assert.match(wide.error.message, /channel: the body is larger than/);
  // The bound leaves what a page sends alone.
  assert.deepEqual((await h('validate', { section: { chain: [{ provider: 'p', model: 'a' }], failureThreshold: 4 } })).value, { problem: null });
  assert.equal((await h('validate', { section: { chain: nest(MAX_BODY_DEPTH - 3, { provider: 'p' }) } })).ok, true, 'deep but within the bound: the module answers');
  await new Promise((resolve) => setImmediate(resolve));
  assert.equal(await written(settingsPath), false);
  assert.deepEqual(audit, []);
  assert.deepEqual(backup(), { provider: 'p', model: 'b' });
});

test('the settings card\'s check: a section nested 50,000 deep is refused naming the field, not a stack overflow', async (t) => {
  const dir = process.env.DSH_HOST_DIR;
  if (!dir) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const { createRequire } = await import('node:module');
  const Schema = createRequire(join(dir, 'host', 'package.json'))('@deepseek-ai/schemastery');
  const { web } = await host();
  let validate;
  const sub = { effect() {}, settings: { register(ns, schema, opts) { validate = opts.validate; return { get: () => ({}), watch: () => () => {} }; } } };
  await web.serveSettings(sub, () => {}, Schema);
  assert.throws(() => validate({ chain: nest(50_000) }), (e) => /^dsh-resilience: settings\.chain\[0\]\[0\].*: nests deeper than 32 levels$/.test(e.message) && !/call stack/.test(e.message));
  assert.throws(() => validate({ chain: [{ provider: 'p', model: 'y'.repeat(MAX_BODY_BYTES) }] }), /settings\.chain\[0\]\.model: the body is larger than/);
  assert.doesNotThrow(() => validate({ chain: [{ provider: 'p', model: 'a' }] }));
});

test('bodyProblem: iterative, bounded, never throws', () => {
  assert.equal(bodyProblem({ a: [1, 'x', null, { b: true }] }), undefined);
  assert.equal(bodyProblem(nest(MAX_BODY_DEPTH - 1)), undefined);
  assert.match(bodyProblem(nest(MAX_BODY_DEPTH + 1)), /nests deeper/);
  const cycle = {}; cycle.self = cycle;
  assert.match(bodyProblem(cycle), /self\.self.*nests deeper/);
  const trap = {}; Object.defineProperty(trap, 'x', { enumerable: true, get() { throw new Error('boom'); } });
  assert.match(bodyProblem({ y: trap }), /cannot be read as JSON/);
  assert.match(bodyProblem(nest(1_000_000)), /nests deeper/);
});
