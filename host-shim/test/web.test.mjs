// The web client's host half (web.js) and live reconfiguration
// (the engine's reconfigure), on the real policy module: the long poll, the return
// record, the session view, candidates checked with model info, the rows'
// audit records, the module's own config check.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { compileModule, Policy } from '../policy.js';
import { WebHalf } from '../web.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];
const quiet = { warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });

function half(over = {}) {
  const records = [];
  const policy = new Policy(compiled, { chain: CHAIN }, quiet, (r) => records.push(r));
  let backup;
  const web = new WebHalf({
    auditPath: over.auditPath ?? '/nonexistent/audit.jsonl',
    rowPolicyConfig: { chain: CHAIN },
    backup: () => backup,
    setBackup: async (c) => { backup = c; return undefined; },
    applyConfig: (next) => policy.reconfigure(next),
  });
  web.deps.policy = policy;
  const log = { write: (r) => { records.push(r); return Promise.resolve(); }, flush: () => Promise.resolve(), failures: 0 };
  return { web, policy, records, audit: web.tap(log), report: (r) => web.tap(log).write(r) };
}

const quota = { kind: 'request-error', agent: 'session-s1', provider: 'p', phase: 'before-host', rand: 0, failure: { code: 'QUOTA', message: 'Insufficient Balance', status: 402 } };

test('status long poll: answers at once when behind, else when an audit record arrives', async () => {
  const { web, audit } = half();
  const first = await web.watch(undefined, undefined);
  let answered;
  const waiting = web.watch(first.revision, undefined).then((s) => { answered = s; });
  await new Promise((r) => setTimeout(r, 30));
  assert.equal(answered, undefined, 'nothing changed: still waiting');
  audit.write({ type: 'failover', agent: 'session-s1', from: 'p/a', to: 'p/b', code: 'QUOTA' });
  await waiting;
  assert.equal(answered.revision, first.revision + 1);
  assert.equal(answered.lastDecision.type, 'failover');
});

test('an aborted long poll ends at once', async () => {
  const { web } = half();
  const s = await web.watch(undefined);
  const stop = new AbortController();
  const p = web.watch(s.revision, undefined, stop.signal);
  stop.abort();
  assert.equal((await p).revision, s.revision);
});

test('a session: its route, the channel it left, a give-up until its next request, and the return record', () => {
  const { web, audit, report, policy, records } = half();
  const agent = { id: 'session-s1' };
  web.routed(agent, { provider: 'p', model: 'a' }, report);
  policy.decide(1000, { kind: 'request', agent: 'session-s1', proposed: CHAIN[0] });
  audit.write({ type: 'failover', agent: 'session-s1', from: 'p/a', to: 'p/b', code: 'QUOTA', class: 'quota' });
  web.routed(agent, { provider: 'p', model: 'b' }, report);
  // The browser knows the session without the prefix.
  assert.deepEqual(web.status('s1').session, { id: 's1', route: 'p/b', home: 'p/a', giveUp: null });
  audit.write({ type: 'give-up', agent: 'session-s1', channel: 'p/b', reason: 'budget-exhausted', code: 'QUOTA' });
  assert.equal(web.status('session-s1').session.giveUp.reason, 'budget-exhausted');
  web.routed(agent, { provider: 'p', model: 'a' }, report);
  assert.deepEqual(records.filter((r) => r.type === 'return').map(({ agent: a, from, to }) => ({ a, from, to })), [{ a: 'session-s1', from: 'p/b', to: 'p/a' }]);
  assert.deepEqual(web.status('s1').session, { id: 's1', route: 'p/a', home: null, giveUp: null });
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
  assert.equal((await h('nope', {})).error.code, 'UNKNOWN_ENDPOINT');
  assert.equal((await h('set-backup', { channel: 'no-slash' })).error.code, 'INVALID');
  const set = await h('set-backup', { channel: 'p/b' });
  assert.equal(set.ok, true);
  assert.equal(set.value.backup, 'p/b');
  assert.equal((await h('set-backup', { clear: true })).value.backup, null);
  assert.deepEqual((await h('validate', { section: { recovery: 'stay' } })).value, { problem: null });
});
