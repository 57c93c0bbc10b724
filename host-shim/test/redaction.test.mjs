// Provider text that echoes a credential, through the whole plugin with the
// real module (index.js under a fake Cordis context): the audit log, the
// host's telemetry seam, a webhook, the web's inline rows, the report, the
// plugin's own events (a probe's too) and the retry rows it appends to a
// session hold none of it (policy/redact is the rule, the module
// applies it; redaction.js hands it the credentials' values).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apply } from '../index.js';
import { compileModule, Engine, WITHHELD } from '../engine.js';
import { providerRefs } from '../redaction.js';
import { reportData } from '../report-command.js';
import { Shell } from '../shell.js';
import { WebHalf } from '../web.js';
import { usedStateDir } from './state-dirs.mjs';

const P = { provider: 'p', model: 'a' };
const Q = { provider: 'q', model: 'b' };
// The values the host's credential service resolves: a provider key with no
// key shape of its own (only its value gives it away) and the webhook's signing secret.
const CREDENTIALS = { P_API_KEY: 'fake-key-literal-0123456', HOOK_SECRET: 'hook-signing-secret-42' };
// Six shapes and the two values, each as a provider might echo it.
const SECRETS = {
  providerKey: CREDENTIALS.P_API_KEY,
  signingSecret: CREDENTIALS.HOOK_SECRET,
  sk: 'sk-4f9XaB12cdEF34ghIJ56kl',
  bearer: 'tok9f8e7d6c5b4a3f2e1d0c',
  apiKey: 'hunter2secretvalue',
  aws: 'AKIAIOSFODNN7EXAMPLE',
  jwt: 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N',
  hexAfterKey: '3f2a9c0d8e7b6a5f4e3d2c1b0a998877',
};
const MESSAGE = `401 Unauthorized: key ${SECRETS.providerKey} refused; request headers: Authorization: Bearer ${SECRETS.bearer}, ` +
  `x-api-key: ${SECRETS.sk}; query api_key=${SECRETS.apiKey}; aws ${SECRETS.aws}; session ${SECRETS.jwt}; ` +
  `invalid key ${SECRETS.hexAfterKey}; signature secret ${SECRETS.signingSecret}`;
// A code is the adapter's word; one that passes the provider's own on may carry a key too.
const CODE = `ERR Bearer ${SECRETS.bearer} ${SECRETS.sk} ${SECRETS.aws} ${SECRETS.jwt} ${SECRETS.providerKey} api_key=${SECRETS.apiKey}`;

function leaks(text) {
  return Object.entries(SECRETS).filter(([, v]) => text.includes(v)).map(([k]) => k);
}

/** A Cordis-shaped context with the host services this path reads. */
function fakeContext(services) {
  const listeners = new Map();
  const emitted = [];
  const disposers = [];
  const effect = (fn) => { disposers.push(fn()); };
  const ctx = {
    logger: () => ({ warn() {}, info() {} }),
    on: (name, fn) => { listeners.set(name, fn); },
    emit: (name, payload) => { emitted.push([name, payload]); },
    get: (name) => services[name],
    inject(names, fn) { if (names.every((n) => services[n])) fn({ ...services, on() {}, effect }); },
    effect,
    provide() {},
    async dispose() {
      for (const d of disposers.reverse()) await d?.();
      disposers.length = 0;
    },
  };
  return { ctx, listeners, emitted };
}

test('a provider error echoing credentials: none of it reaches the audit log, telemetry, a webhook, the web rows or the report', async (t) => {
  const dir = await usedStateDir('redaction-');
  const hooks = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => { hooks.push(body); res.end('ok'); });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const telemetry = [];
  const services = {
    credentials: { resolve: async (ref) => (CREDENTIALS[ref] ? { value: CREDENTIALS[ref], source: 'env' } : undefined) },
    settings: { get: (ns) => (ns === 'llm-p' ? { providers: { p: { apiKeyEnv: 'P_API_KEY' } } } : undefined) },
    llm: {
      listConfigurableProviders: () => [{ provider: 'p', displayName: 'P', settingsNs: 'llm-p', settingsPath: ['providers', 'p'] }],
      resolveModelInfo: async () => ({}),
    },
    sessionTelemetry: { emit: (r) => telemetry.push(r) },
  };
  const { ctx, listeners, emitted } = fakeContext(services);
  t.after(() => ctx.dispose());
  const notify = [{ url: `http://127.0.0.1:${server.address().port}/hook`, events: ['give-up', 'provider-open'], secretEnv: 'HOOK_SECRET' }];
  let parts;
  await apply(ctx, { chain: [P, Q], failureThreshold: 1, probes: false, stateDir: dir, notice: false, notify }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  await parts.up;

  const appended = []; // what the plugin appends to the sessions (retry-events.js): the session files
  const session = (id) => ({ id, append: (type, data) => { appended.push([type, data]); } });
  const a1 = { id: 's-1', session: session('s-1') };
  const a2 = { id: 's-2', session: session('s-2') };
  const request = (agent, proposed) => listeners.get('agent/request')({ agent }, async () => ({ ...proposed }));
  const fail = (agent, provider, failure) => listeners.get('agent/request-error')(
    { agent, provider, failure, turn: 1, step: 1, signal: new AbortController().signal }, async () => undefined);
  // s-2: an adapter whose code carries the provider's words: its channel opens on it (the code is the cause).
  await request(a2, Q);
  await fail(a2, 'q', { code: CODE, message: MESSAGE, status: 500 });
  // s-1: its key is refused with the provider's body quoting it; the other channel is open: given up on.
  await request(a1, P);
  await fail(a1, 'p', { code: 'AUTH', message: MESSAGE, status: 401 });
  await ctx.dispose();

  const audit = await readFile(join(dir, 'audit.jsonl'), 'utf8');
  const web = new WebHalf({ auditPath: join(dir, 'audit.jsonl') });
  const rows = [...(await web.rows('s-1')).records, ...(await web.rows('s-2')).records];
  const report = await reportData(join(dir, 'audit.jsonl'), '24h', Date.now() + 1000);
  // Every way out at once, so a leak names each channel it reached.
  assert.deepEqual({
    audit: leaks(audit), telemetry: leaks(JSON.stringify(telemetry)), webhooks: leaks(hooks.join('\n')), webRows: leaks(JSON.stringify(rows)),
    report: leaks(JSON.stringify(report)), events: leaks(JSON.stringify(emitted)),
  }, { audit: [], telemetry: [], webhooks: [], webRows: [], report: [], events: [] });
  // ...and each did carry the records the text was in, its words kept around the marks.
  assert.match(audit, /401 Unauthorized: key \[redacted\] refused; request headers: Authorization: Bearer \[redacted\]/);
  assert.ok(telemetry.some((r) => r.attributes['resilience.type'] === 'give-up'), 'telemetry saw the give-up');
  assert.ok(hooks.some((b) => b.includes('"give-up"')) && hooks.some((b) => b.includes('"provider-open"')), `the webhook saw the open and the give-up: ${hooks}`);
  assert.ok(rows.some((r) => r.type === 'give-up'), 'the web rows hold the give-up');
  assert.ok(report.report.giveUps.length > 0, 'the report counts the give-ups');
  assert.ok(!audit.includes('module-failure'), audit);
});

test('a wait on the same channel: the session\'s retry row (a session file) holds none of it either', async (t) => {
  const dir = await usedStateDir('redaction-');
  const services = {
    credentials: { resolve: async (ref) => (CREDENTIALS[ref] ? { value: CREDENTIALS[ref], source: 'env' } : undefined) },
    settings: { get: (ns) => (ns === 'llm-p' ? { providers: { p: { apiKeyEnv: 'P_API_KEY' } } } : undefined) },
    llm: { listConfigurableProviders: () => [{ provider: 'p', displayName: 'P', settingsNs: 'llm-p', settingsPath: ['providers', 'p'] }] },
  };
  const { ctx, listeners } = fakeContext(services);
  t.after(() => ctx.dispose());
  let parts;
  await apply(ctx, { chain: [P], probes: false, stateDir: dir, notice: false }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  await parts.up;
  const appended = [];
  const agent = { id: 's-3', session: { id: 's-3', append: (type, data) => { appended.push([type, data]); } } };
  await listeners.get('agent/request')({ agent }, async () => ({ ...P }));
  const action = await listeners.get('agent/request-error')(
    { agent, provider: 'p', failure: { code: 'SERVER', message: MESSAGE, status: 500 }, turn: 1, step: 1, signal: new AbortController().signal },
    async () => undefined);
  await ctx.dispose();
  assert.deepEqual(action, { kind: 'retry' }, 'waited, then retried');
  const rows = appended.filter(([type]) => type === 'llm/retry');
  assert.equal(rows.length, 1, JSON.stringify(appended));
  assert.deepEqual(leaks(JSON.stringify(appended)), []);
  assert.match(rows[0][1].failure.message, /^401 Unauthorized: key \[redacted\] refused/);
});

test('the host\'s providers name their credential variables in their settings sections', () => {
  const llm = { listConfigurableProviders: () => [
    { provider: 'deepseek-official', settingsNs: 'llm-deepseek', settingsPath: [] },
    { provider: 'mock', settingsNs: 'llm-pi-ai', settingsPath: ['providers', 'mock'] },
    { provider: 'ambient', settingsNs: 'llm-pi-ai', settingsPath: ['providers', 'ambient'] },
  ] };
  const sections = { 'llm-deepseek': { apiKeyEnv: 'DEEPSEEK_API_KEY' }, 'llm-pi-ai': { providers: { mock: { apiKeyEnv: 'MOCK_API_KEY' }, ambient: {} } } };
  assert.deepEqual(providerRefs(llm, { get: (ns) => sections[ns] }), ['DEEPSEEK_API_KEY', 'MOCK_API_KEY']);
  assert.deepEqual(providerRefs(undefined, undefined), []);
  assert.deepEqual(providerRefs({ listConfigurableProviders: () => { throw new Error('x'); } }, undefined), []);
});

test('text the shim writes itself: redacted by the module when it is up, withheld whole before', async () => {
  const engine = new Engine(compileModule(), { chain: [P] }, { warn() {} });
  assert.deepEqual(engine.redact([MESSAGE]), [WITHHELD], 'not up: withheld');
  await engine.start();
  engine.setSecrets(Object.values(CREDENTIALS));
  const [out] = engine.redact([MESSAGE]);
  assert.deepEqual(leaks(out), []);
  assert.match(out, /^401 Unauthorized: key \[redacted\] refused; request headers: Authorization: Bearer \[redacted\]/);
  const f = engine.redactFailure({ code: CODE, message: MESSAGE, status: 401 });
  assert.deepEqual(leaks(JSON.stringify(f)), []);
  assert.equal(f.status, 401);
  // The values live beside the state: never in a snapshot.
  assert.deepEqual(leaks(JSON.stringify(engine.snapshot())), []);
});

test('a probe whose failure quotes a key: the plugin\'s probe events and records hold none of it', async () => {
  const engine = new Engine(compileModule(), { chain: [P, Q] }, { warn() {} });
  await engine.start();
  engine.setSecrets(Object.values(CREDENTIALS));
  const emitted = [];
  const records = [];
  const llm = {
    // eslint-disable-next-line require-yield
    async* stream() { throw Object.assign(new Error(MESSAGE), { failure: { code: CODE, message: MESSAGE } }); },
  };
  const ctx = { get: (name) => (name === 'llm' ? llm : undefined), emit: (name, payload) => emitted.push([name, payload]) };
  const shell = new Shell({
    ctx, engine, step: (ev) => engine.step(ev), report: (r) => records.push(r), web: { decided: (r) => records.push(r) },
    emit: (name, payload) => emitted.push([name, payload]), logger: { warn() {}, info() {} }, health: {}, signal: new AbortController().signal,
  });
  shell.probe(P);
  await shell.dispose(); // waits for the probe in flight
  const probe = emitted.find(([name]) => name === 'dsh-resilience/probe');
  assert.ok(probe, JSON.stringify(emitted));
  assert.match(probe[1].message, /^401 Unauthorized: key \[redacted\] refused/);
  assert.deepEqual(leaks(JSON.stringify([emitted, records])), []);
});
