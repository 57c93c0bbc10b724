// The web RPC's bodies, fuzzed through the real handler (web.js) with the
// real quota rules, settings file and module behind it: random and
// adversarial bodies (deep nesting, huge strings and arrays, prototype keys
// as JSON.parse makes them, wrong types, near-valid fields) at every
// endpoint. For each: the handler answers (no throw escapes, no INTERNAL),
// a refusal is short and writes nothing (settings file, audit, backup), and
// Object.prototype and Array.prototype are never polluted.
//
// Seeded and repeatable: RPC_FUZZ_SEED picks the run, RPC_FUZZ_N how many
// bodies (default 1000, about ten seconds); the count tried is printed.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModule, Engine as Policy } from '../engine.js';
import { QuotaRules } from '../quota.js';
import { reasonOf, WebHalf } from '../web.js';

const quiet = { warn() {} };
const ROW = { probes: false, chain: [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }], pools: [{ name: 'main', routes: [{ provider: 'p', model: 'a' }] }], quota: { longTermDelayMs: 1000 } };
const ENDPOINTS = ['status', 'candidates', 'set-backup', 'set-quota', 'set-pool', 'rows', 'validate', 'report'];
const FIELDS = ['session', 'value', 'channel', 'clear', 'since', 'section', 'window', 'locale'];
const PROTO_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];
const SECTION_KEYS = ['chain', 'failureThreshold', 'cooldownMs', 'recovery', 'persistent', 'backoffMaxMs', 'provider', 'model'];
let compiled;
before(async () => { compiled = await compileModule(); });

/** mulberry32: a small seeded generator, so a failing body can be made again from its seed. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Bodies as JSON text, parsed as the host parses a request (so `__proto__` is an own key). */
function generator(rand) {
  const int = (n) => Math.floor(rand() * n);
  const pick = (xs) => xs[int(xs.length)];
  const str = () => pick([
    () => '', () => 'live', () => 'session-live', () => 'logged', () => 'off', () => 'on', () => 'default', () => 'main', () => 'p/a', () => 'p/b',
    () => 'stay', () => '24h', () => 'en', () => '../../etc/passwd', () => '\u0000\u001b[31m', () => '名前/模型', () => '\ud800',
    () => 'x'.repeat(int(300)), () => 'y'.repeat(int(2) ? 1_000 : 1_100_000), () => pick(PROTO_KEYS), () => String(rand()),
  ])();
  const scalar = () => pick([() => null, () => true, () => false, () => int(10), () => -1, () => 1e308, () => 0.5, () => 2 ** 53 + 1, str])();
  const deepText = (n, inner) => '['.repeat(n) + inner + ']'.repeat(n);
  const key = () => (int(4) === 0 ? pick(PROTO_KEYS) : int(3) === 0 ? pick(FIELDS) : int(2) ? pick(SECTION_KEYS) : str());
  /** @returns {string} JSON text of a value `depth` levels down. */
  const value = (depth) => {
    const r = int(20);
    if (depth > 6 || r < 8) return JSON.stringify(scalar()) ?? 'null';
    if (r === 8) return deepText(pick([20, 33, 100, 50_000, 200_000]), JSON.stringify(scalar()) ?? '0');
    if (r === 9) return nestedObjects(pick([10, 40, 10_000]));
    if (r === 10) return `[${Array.from({ length: pick([1_000, 100_000]) }, () => '0').join(',')}]`;
    if (r < 15) return `[${Array.from({ length: int(4) }, () => value(depth + 1)).join(',')}]`;
    return object(depth + 1);
  };
  const nestedObjects = (n) => `${'{"chain":'.repeat(n)}1${'}'.repeat(n)}`;
  const object = (depth) => `{${Array.from({ length: int(5) }, () => `${JSON.stringify(key())}:${value(depth)}`).join(',')}}`;
  const channel = () => pick([() => '"p/a"', () => '{"provider":"p","model":"b"}', () => '{"__proto__":{"provider":"p","model":"a"}}', () => value(1)])();
  /** A body that is near what a page sends, with one part made bad, or any value at all. */
  const body = (endpoint) => {
    switch (int(6)) {
      case 0: return value(0);
      case 1: return object(0);
      default: {
        const byEndpoint = {
          'status': () => [['session', JSON.stringify(str())], ['since', value(2)]],
          'candidates': () => [],
          'set-backup': () => [['channel', channel()], ['clear', JSON.stringify(scalar())]],
          'set-quota': () => [['session', JSON.stringify(pick(['live', 'logged', str()]))], ['value', JSON.stringify(pick(['on', 'off', 'default', str()]))]],
          'set-pool': () => [['session', JSON.stringify(pick(['live', str()]))], ['value', JSON.stringify(pick(['main', str()]))]],
          'rows': () => [['session', JSON.stringify(str())]],
          'validate': () => [['section', pick([() => object(1), () => `{"chain":[${channel()}],"failureThreshold":${JSON.stringify(scalar())}}`, () => value(1)])()]],
          'report': () => [['window', JSON.stringify(str())], ['locale', JSON.stringify(str())]],
        };
        const fields = Object.hasOwn(byEndpoint, endpoint) ? byEndpoint[endpoint] : () => [[key(), value(1)]];
        const parts = fields().map(([k, v]) => (int(5) === 0 ? [k, value(1)] : [k, v]));
        if (int(4) === 0) parts.push([pick(PROTO_KEYS), value(1)]);
        return `{${parts.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
      }
    }
  };
  return { body, endpoint: () => (int(12) === 0 ? str() : pick(ENDPOINTS)) };
}

async function host() {
  const dir = await mkdtemp(join(tmpdir(), 'rpc-fuzz-'));
  const settingsPath = join(dir, 'quota-sessions.json');
  const auditPath = join(dir, 'audit.jsonl');
  const policy = new Policy(compiled, ROW, quiet);
  const audit = [];
  const quota = new QuotaRules({ ctx: { get: () => undefined }, policy, settingsPath, report: (r) => audit.push(r), emit: () => {},
    lifetime: new AbortController().signal, decide: (event) => policy.decide(Date.now(), event) });
  let backup = { provider: 'p', model: 'b' };
  const web = new WebHalf({
    auditPath, rowPolicyConfig: ROW, backup: () => backup,
    setBackup: async (c) => { backup = c; return undefined; }, applyConfig: () => {}, quota, sessionsDir: join(dir, 'sessions'),
  });
  web.deps.policy = policy;
  const live = new Set(['session-live']);
  web.ctx = { get: (name) => (name === 'sessions' ? { get: (id) => (live.has(id) ? {} : undefined) } : undefined) };
  await mkdir(join(dir, 'sessions', '--work--', 'session-logged'), { recursive: true });
  const state = async () => {
    await quota.settings.queue;
    return JSON.stringify([await readFile(settingsPath, 'utf8').catch(() => ''), audit.length, backup]);
  };
  return { h: web.handler(() => undefined), state };
}

const protoKeys = () => JSON.stringify([Object.getOwnPropertyNames(Object.prototype), Object.getOwnPropertyNames(Array.prototype)]);

test('random and adversarial bodies at every endpoint: an answer, never INTERNAL; a refusal writes nothing; no prototype polluted', async (t) => {
  const seed = Number(process.env.RPC_FUZZ_SEED ?? 34);
  const n = Number(process.env.RPC_FUZZ_N ?? 1000);
  const gen = generator(rng(seed));
  const { h, state } = await host();
  const baseline = protoKeys();
  const codes = new Map();
  let tried = 0;
  for (; tried < n; tried++) {
    const endpoint = gen.endpoint();
    const text = gen.body(endpoint);
    const payload = JSON.parse(text);
    const where = `seed ${seed}, input ${tried}: ${endpoint} ${text.slice(0, 120)}`;
    const before = await state();
    const abort = new AbortController();
    const answer = h(endpoint, payload, abort.signal);
    setImmediate(() => abort.abort()); // a long poll (status at the current revision) ends at once
    let r;
    try {
      r = await answer;
    } catch (e) {
      assert.fail(`${where}: threw ${e?.stack ?? e}`);
    }
    assert.ok(r && typeof r === 'object' && typeof r.ok === 'boolean', where);
    const code = r.ok ? 'ok' : reasonOf(r);
    codes.set(code, (codes.get(code) ?? 0) + 1);
    if (!r.ok) {
      assert.doesNotMatch(String(code), /^internal$/i, `${where}: ${r.error?.message}`);
      assert.ok(typeof r.error.message === 'string' && r.error.message.length <= 600, `${where}: a short message`);
      assert.equal(await state(), before, `${where}: a refusal writes nothing`);
    }
    assert.equal(protoKeys(), baseline, `${where}: prototypes untouched`);
    assert.equal(({}).provider, undefined, where);
    assert.equal(({}).polluted, undefined, where);
  }
  t.diagnostic(`seed ${seed}: ${tried} bodies tried; answers ${JSON.stringify(Object.fromEntries(codes))}`);
  assert.ok((codes.get('ok') ?? 0) > n / 20, 'some bodies were taken: the fuzz reaches past the door');
  assert.ok((codes.get('INVALID') ?? 0) > n / 20, 'and many refused');
});
