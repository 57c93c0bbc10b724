import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readingOf, runBalance } from '../balance.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { QuotaRules } from '../quota.js';
import { quotaProjection } from '../quota-projection.js';
import { describeSession, poolCommand, quotaCommand, routesTable } from '../quota-commands.js';
import { webChoose, webSet, webView } from '../quota-web.js';
import { migrateMarks } from '../migrate-marks.js';
import { QuotaSettings } from '../quota-settings.js';

const quiet = { warn() {} };
const ROW = {
  probes: false,
  pools: [{ name: 'main', routes: [{ provider: 'pa', model: 'm' }, { provider: 'pb', model: 'm' }] }, { name: 'spare', routes: [{ provider: 'pc', model: 'm' }] }],
  quota: { longTermDelayMs: 1000 },
};
let compiled;
before(async () => { compiled = await compileModule(); });

test('a balance script\'s output is the module\'s to read: the one documented object, a refusal beside it, anything else a missing reading', () => {
  const policy = new Policy(compiled, ROW, quiet);
  const read = (provider, text) => policy.ask('balance-output', { provider, text });
  assert.deepEqual(readingOf('p', '{"remaining": 12.5}\n', read), { kind: 'balance-reading', provider: 'p', ok: true, remaining: 12.5 });
  assert.deepEqual(readingOf('p', '{"remaining": 0, "resetsAt": "2030-01-01T00:00:00Z"}', read),
    { kind: 'balance-reading', provider: 'p', ok: true, remaining: 0, resetsAtMs: Date.parse('2030-01-01T00:00:00Z') });
  assert.deepEqual(readingOf('p', '{"remaining": 3, "error": null}', read), { kind: 'balance-reading', provider: 'p', ok: true, remaining: 3 }, 'a null error is none');
  for (const [text, why] of [['plenty', 'not JSON'], ['', 'not JSON'], ['[1]', 'not JSON'], ['{"remaining":"5"}', 'no numeric remaining'],
    ['{"balance":5}', 'no numeric remaining'], ['null', 'not JSON'], ['{"remaining":5,"resetsAt":"soon"}', 'bad resetsAt'],
    ['{"remaining":1e999}', 'no numeric remaining'], ['[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]', 'not JSON'],
    // The contract: "a provider's own refusal can be reported with error alongside a reading" — the number beside it is nobody's word.
    ['{"remaining": 80, "error": "401 invalid api key"}', 'provider refused'], ['{"remaining": 80, "error": {"code": 429}}', 'provider refused'],
    ['{"error": "endpoint down"}', 'provider refused']]) {
    assert.deepEqual(readingOf('p', text, read), { kind: 'balance-reading', provider: 'p', ok: false, why }, text);
  }
  assert.deepEqual(readingOf('p', '{"remaining": 1}', () => undefined), { kind: 'balance-reading', provider: 'p', ok: false, why: 'policy module failed' });
});

test('an apiKeyEnv nothing is configured for warns, adds no entry, and the script still runs', async () => {
  const policy = new Policy(compiled, ROW, quiet);
  const spawned = [];
  const subprocess = {
    spawn(o) {
      spawned.push(o);
      return { done: Promise.resolve({ exitCode: 0 }), terminate() {}, collected: { stdout: { readFrom: () => ({ text: '{"remaining": 7}', lossy: false, nextOffset: 16 }) } } };
    },
  };
  const ctx = { get: (name) => (name === 'subprocess' ? subprocess : name === 'credentials' ? { resolve: async () => undefined } : undefined) };
  const b = { provider: 'p', script: ['x'], timeoutMs: 5000, refreshMs: 60000, apiKeyEnv: 'DSHR_NEVER_SET_KEY', env: [{ name: 'REGION', value: 'r' }], minimumRemaining: 0 };
  delete process.env.DSHR_NEVER_SET_KEY;
  const r = await runBalance(ctx, b, new AbortController().signal, (provider, text) => policy.ask('balance-output', { provider, text }));
  assert.equal(spawned.length, 1, 'the script ran');
  assert.deepEqual(spawned[0].env, { REGION: 'r' }, 'no entry for the missing credential');
  assert.deepEqual([r.ok, r.remaining], [true, 7]);
  assert.match(r.warning, /credential DSHR_NEVER_SET_KEY not found/);
});

test('settings survive a reload; a fork takes its nearest ancestor\'s explicit setting once, as a snapshot', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json');
  const audit = [];
  const one = new QuotaSettings(path, (r) => audit.push(r));
  await one.set('root', 'pool', 'spare');
  await one.set('root', 'quota', 'off');
  one.adopt('child', 'root');
  one.adopt('grandchild', 'child');
  await one.set('root', 'pool', 'main'); // later: not followed
  await one.save();
  const two = new QuotaSettings(path, () => {});
  await two.load();
  assert.deepEqual([two.get('root').pool, two.get('child').pool, two.get('grandchild').pool], ['main', 'spare', 'spare']);
  assert.equal(two.get('grandchild').quota, 'off');
  assert.equal(two.adopt('orphan', undefined).pool, undefined);
  // Two processes sharing the file: each save merges the other's newer records.
  const other = new QuotaSettings(path, () => {});
  await other.load();
  await other.set('elsewhere', 'pool', 'spare');
  await two.set('root', 'quota', 'on');
  const merged = new QuotaSettings(path, () => {});
  await merged.load();
  assert.deepEqual([merged.get('elsewhere').pool, merged.get('root').quota], ['spare', 'on']);
  // An unreadable file is set aside, not fatal.
  await writeFile(path, '{not json');
  const three = new QuotaSettings(path, (r) => audit.push(r));
  await three.load();
  assert.equal(three.get('root'), undefined);
  assert.ok(audit.some((a) => a.type === 'quota-settings-set-aside'));
});

function rules(path, emitted = [], report = () => {}) {
  const policy = new Policy(compiled, ROW, quiet);
  const q = new QuotaRules({
    ctx: { get: () => undefined }, policy, settingsPath: path, report, emit: (name, payload) => emitted.push({ name, payload }),
    lifetime: new AbortController().signal,
    decide: (event) => {
      const out = policy.decide(Date.now(), event);
      for (const fx of out?.effects ?? []) {
        if (fx.kind === 'quota-wait') q.onWait(fx);
        if (fx.kind === 'quota-routed') q.onRouted(fx);
      }
      return out;
    },
  });
  return q;
}

const agent = (id, session, parent) => ({ id, session: { id: session, header: parent ? { parentSession: parent } : {} } });

test('commands, the service and the switch ending a wait, against the real module', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json');
  const emitted = [];
  const q = rules(path, emitted);
  const a = agent('a1', 's1');
  assert.match(poolCommand(q, a, 'spare').text, /pool: spare \(session\), route pc\/m/);
  assert.equal(poolCommand(q, a, 'nope').kind, 'error');
  const svc = q.service();
  assert.equal(svc.poolOf('s1'), 'spare');
  assert.equal(svc.setPool('s1', 'nope'), false);
  assert.equal(svc.setPool('s1', 'default'), true);
  assert.equal(svc.poolOf('s1'), 'spare', 'default: inferred from the route it is on, which only spare holds');
  assert.equal(svc.setPool('s1', null), true);
  assert.equal(svc.poolOf('s1') ?? null, null, 'null is the quota plugin\'s opt-out: no pool');
  assert.match(describeSession(q, 'a1'), /pool: off/);
  assert.equal(svc.setPool('s1', 'default'), true);
  assert.deepEqual(await svc.pickRoute('main'), { provider: 'pa', model: 'm' });
  assert.equal(await svc.pickRoute('nope'), undefined);

  // A wait, ended by the switch.
  q.decide({ kind: 'request', agent: 'a1', proposed: { provider: 'pc', model: 'm' } });
  q.noteFailure({ agent: a, turn: 1, step: 2, failure: { code: 'QUOTA' } });
  q.decide({ kind: 'request-error', agent: 'a1', provider: 'pc', phase: 'before-host', rand: 0, failure: { code: 'QUOTA' } });
  assert.equal(svc.isRetrying('s1'), true);
  const hold = q.hold('a1');
  assert.deepEqual([svc.stateOf('s1').pending, svc.stateOf('s1').retrying, svc.stateOf('s1').attempts, svc.stateOf('s1').turn], [true, true, 1, 1]);
  assert.equal(svc.stateOf('s1').at, svc.stateOf('s1').nextAttemptAt);
  assert.ok(Object.isFrozen(svc.stateOf('s1')));
  assert.match(quotaCommand(q, a, 'off').text, /quota retry: off/);
  assert.equal(hold.signal.aborted, true, 'the switch ended the wait');
  assert.deepEqual(emitted.map((e) => [e.name, e.payload.reason]), [['llm-quota-retry/entered', undefined], ['llm-quota-retry/left', 'disabled']]);
  assert.equal(emitted[0].payload.session, 's1');
  // The quota plugin's fields: the flags, the times, how long the wait lasted.
  assert.deepEqual([emitted[0].payload.pending, emitted[0].payload.retrying, emitted[0].payload.at], [true, true, emitted[0].payload.nextAttemptAt]);
  const left = emitted[1].payload;
  assert.deepEqual([left.pending, left.retrying, left.at], [false, false, left.leftAt]);
  assert.equal(left.durationMs, left.leftAt - left.enteredAt);
  assert.equal(svc.stateOf('s1'), undefined, 'outside a wait: undefined, as callers of the quota plugin test it');
  assert.equal(svc.isRetrying('s1'), false);
  await q.settings.queue;
  assert.deepEqual(JSON.parse(await readFile(path, 'utf8')).sessions.s1.quota, 'off');

  // A restarted host sends the settings again on first sight.
  const again = rules(path);
  await again.load();
  again.track(a);
  assert.match(describeSession(again, 'a1'), /quota retry: off \(set for this session\)/);
  // A fork of s1 takes them as a snapshot.
  again.track(agent('a2', 's2', 's1'));
  assert.match(describeSession(again, 'a2'), /quota retry: off \(inherited from its parent session\)/);
  assert.deepEqual([webView(again, 's2').source, webView(again, 's2').enabled], ['inherited', false], 'the chip says whose setting it is');
  assert.equal(again.inspect('a2').session.enabledSource, 'inherited');
  // Its own choice makes it its own; its default clears it to the row's default, never back to its parent's.
  quotaCommand(again, agent('a2', 's2', 's1'), 'off');
  assert.match(describeSession(again, 'a2'), /quota retry: off \(set for this session\)/);
  quotaCommand(again, agent('a2', 's2', 's1'), 'default');
  assert.match(describeSession(again, 'a2'), /quota retry: on \(default: on\)/);
  assert.match(routesTable(again, ).text, /pool main: new sessions get pa\/m/);
  assert.equal(routesTable(again, 'nope').kind, 'error');
});

test('the quotaRetry projection is the quota plugin\'s format exactly, folded from the session\'s own commands and route', () => {
  const q = rules('/nonexistent/quota.json');
  const p = q.projection();
  let s = p.init();
  const ev = (type, data) => ({ type, data });
  s = p.apply(s, ev('request/header', { header: { config: { provider: 'pa', model: 'm' } } }));
  // {enabled, defaultEnabled, source, pool, poolSource, pools}: pools are names; a pool the route infers is `default`.
  assert.deepEqual(p.view(s), { enabled: true, defaultEnabled: true, source: 'default', pool: 'main', poolSource: 'default', pools: ['main', 'spare'] });
  const same = p.apply(s, ev('assistant/chunk', {}));
  assert.equal(same, s, 'an unrelated event keeps the state reference');
  s = p.apply(s, ev('command/run', { name: 'quota-retry', args: 'off' }));
  s = p.apply(s, ev('command/run', { name: 'resilience', args: 'pool spare' }));
  s = p.apply(s, ev('command/run', { name: 'quota-pool', args: 'nope' })); // refused by the command: no change
  assert.deepEqual(p.view(s), { enabled: false, defaultEnabled: true, source: 'session', pool: 'spare', poolSource: 'session', pools: ['main', 'spare'] });
  s = p.apply(s, ev('command/run', { name: 'quota-pool', args: 'off' }));
  assert.deepEqual([p.view(s).pool, p.view(s).poolSource], [null, 'off'], 'off: no pool');
  s = p.apply(s, ev('command/run', { name: 'quota-pool', args: 'default' }));
  assert.deepEqual([p.view(s).pool, p.view(s).poolSource], ['main', 'default']);
  s = p.apply(s, ev('command/run', { name: 'quota-retry', args: 'default' }));
  assert.deepEqual([p.view(s).enabled, p.view(s).source], [true, 'default']);
  // Lossless JSON: the state and the view survive a round trip unchanged (the host checkpoints the state).
  assert.deepEqual(JSON.parse(JSON.stringify(s)), s);
  assert.deepEqual(JSON.parse(JSON.stringify(p.view(s))), p.view(s));
  // A checkpoint of the version before (it held poolDefault) reads the same.
  assert.deepEqual(p.view({ ...s, poolDefault: true }), p.view(s));
});

test('before the module is up the quotaRetry projection says what the fold knows: the session\'s choices, no default, no pools', () => {
  const p = quotaProjection(() => undefined, () => undefined);
  const ev = (args) => ({ type: 'command/run', data: { name: 'quota-pool', args } });
  assert.deepEqual(p.view(p.init()), { enabled: null, defaultEnabled: null, source: 'default', pool: null, poolSource: 'default', pools: [] });
  const picked = p.apply({ ...p.init(), quota: 'off' }, ev('anywhere')); // no config to refuse it: kept as picked
  assert.deepEqual(p.view(picked), { enabled: false, defaultEnabled: null, source: 'session', pool: 'anywhere', poolSource: 'session', pools: [] });
  assert.deepEqual([p.view(p.apply(picked, ev('off'))).pool, p.view(p.apply(picked, ev('off'))).poolSource], [null, 'off']);
});

const quotaFailure = (provider) => ({ kind: 'request-error', agent: 'x', provider, phase: 'before-host', rand: 0, failure: { code: 'QUOTA', message: 'Insufficient Balance', status: 402 } });
const markedUntil = (policy, provider) => policy.ask('inspect', { nowMs: Date.now() })?.providers.find((p) => p.provider === provider)?.markedUntilMs;

test('an exhaustion mark is in the provider\'s health record: a second process takes it from the snapshot, not from a file of its own', () => {
  const one = new Policy(compiled, ROW, quiet);
  const now = Date.now();
  one.decide(now, { kind: 'request', agent: 'x', proposed: { provider: 'pa', model: 'm' } });
  one.decide(now, quotaFailure('pa'));
  const rec = one.snapshot().channels.find((c) => c.channel.provider === 'pa' && c.channel.model === '*');
  assert.equal(rec.markedAtMs, now);
  assert.equal(rec.lastCode, 'QUOTA');
  const two = new Policy(compiled, ROW, quiet);
  assert.equal(two.restore(JSON.stringify(one.snapshot())).adopted > 0, true);
  assert.equal(markedUntil(two, 'pa'), rec.openUntilMs);
  const out = two.decide(Date.now(), { kind: 'request', agent: 'y', proposed: { provider: 'pa', model: 'm' } });
  assert.deepEqual([out.verdict.kind, out.verdict.provider], ['swap', 'pb'], 'a new session keeps off the marked provider');
});

test('a rebuilt (trapped) or reconfigured module keeps the marks: they come with the health it is restored from', async () => {
  const { TrapError } = await import('../engine.js');
  const policy = new Policy(compiled, ROW, quiet);
  const now = Date.now();
  policy.decide(now, { kind: 'request', agent: 'x', proposed: { provider: 'pa', model: 'm' } });
  policy.decide(now, quotaFailure('pa'));
  const until = markedUntil(policy, 'pa');
  assert.ok(until > now);
  policy.fail(new TrapError(new Error('boom')), 'request'); // rebuilds
  assert.equal(markedUntil(policy, 'pa'), until, 'the rebuilt instance has the mark');
  policy.reconfigure({ ...ROW, quota: { longTermDelayMs: 2000 } });
  assert.equal(markedUntil(policy, 'pa'), until, 'so has the reconfigured one');
});

test('an older version\'s quota-marks.json is folded into health once: live marks taken, lifted and lapsed ones not, the file renamed', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quota-'));
  const path = join(dir, 'quota-marks.json');
  const now = Date.now();
  await writeFile(path, JSON.stringify({ marks: {
    pa: { markedAtMs: now - 1000, untilMs: now + 60_000, v: 1 },
    pb: { markedAtMs: now - 1000, untilMs: now + 60_000, liftedAtMs: now - 500, v: 2 }, // lifted
    pc: { markedAtMs: now - 90_000, untilMs: now - 30_000, v: 1 }, // lapsed
  } }));
  const off = new Policy(compiled, { probes: false, chain: [{ provider: 'pa', model: 'm' }] }, quiet);
  assert.equal(await migrateMarks(path, off, () => {}, now), false, 'no quota rules: left for a config that has them');
  await access(path);

  const records = [];
  const policy = new Policy(compiled, ROW, quiet);
  assert.equal(await migrateMarks(path, policy, (r) => records.push(r), now), true);
  assert.equal(markedUntil(policy, 'pa'), now + 60_000);
  assert.equal(markedUntil(policy, 'pb'), undefined);
  assert.equal(markedUntil(policy, 'pc'), undefined);
  const rec = policy.snapshot().channels.find((c) => c.channel.provider === 'pa' && c.channel.model === '*');
  assert.deepEqual([rec.state, rec.markedAtMs, rec.openUntilMs], ['open', now - 1000, now + 60_000], 'the mark is in the record health.json and Redis carry');
  assert.deepEqual(records.map((r) => [r.type, r.marks, r.providers]), [['quota-marks-migrated', 1, ['pa']]]);
  await assert.rejects(access(path), 'renamed');
  await access(`${path}.migrated`);
  assert.equal(await migrateMarks(path, policy, (r) => records.push(r), now), false, 'once');
  assert.equal(records.length, 1);

  // A record the module holds at a higher version still takes the mark: the fold goes one above it.
  const again = new Policy(compiled, ROW, quiet);
  again.decide(now - 5000, { kind: 'request', agent: 'x', proposed: { provider: 'pa', model: 'm' } });
  again.decide(now - 5000, quotaFailure('pa'));
  const before = again.snapshot().channels.find((c) => c.channel.provider === 'pa' && c.channel.model === '*');
  await writeFile(path, JSON.stringify({ marks: { pa: { markedAtMs: now - 1000, untilMs: before.openUntilMs + 60_000, v: 1 } } }));
  assert.equal(await migrateMarks(path, again, () => {}, now), true);
  const after = again.snapshot().channels.find((c) => c.channel.provider === 'pa' && c.channel.model === '*');
  assert.deepEqual([after.version, after.openUntilMs], [before.version + 1, before.openUntilMs + 60_000]);
});

test('a quota-marks.json that does not parse is renamed and said, nothing taken', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'quota-'));
  const path = join(dir, 'quota-marks.json');
  await writeFile(path, '{not json');
  const records = [];
  assert.equal(await migrateMarks(path, new Policy(compiled, ROW, quiet), (r) => records.push(r)), false);
  assert.match(records[0].reason, /^did not parse/);
  await access(`${path}.migrated`);
});

test('the web chip\'s view and writes: the commands\' path, by session id with or without the host\'s prefix', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json');
  const q = rules(path);
  // No agent yet: the setting waits for the session's first request.
  assert.equal(webSet(q, 'later', 'pool', 'spare'), undefined);
  assert.deepEqual(webView(q, 'later'), { defaultEnabled: true, pools: ['main', 'spare'], enabled: true, source: 'default', pool: 'spare', poolSource: 'session' });
  q.track(agent('a2', 'later'));
  assert.equal(q.service().poolOf('later'), 'spare');
  // A tracked session, named as the browser names it.
  q.track(agent('a1', 'session-s1'));
  assert.equal(webSet(q, 's1', 'quota', 'off'), undefined);
  assert.equal(webSet(q, 's1', 'pool', 'main'), undefined);
  assert.match(webSet(q, 's1', 'pool', 'nope'), /no pool "nope"/);
  assert.match(webSet(q, 's1', 'quota', 'maybe'), /not on, off or default/);
  assert.deepEqual(webView(q, 's1'), { defaultEnabled: true, pools: ['main', 'spare'], enabled: false, source: 'session', pool: 'main', poolSource: 'session' });
  assert.match(quotaCommand(q, agent('a1', 'session-s1'), 'status').text, /quota retry: off \(set for this session\)\npool: main \(session\)/);
  assert.equal(q.settings.get('session-s1').quota, 'off');
  // No quota rules: nothing to show, and a write is refused.
  const none = new QuotaRules({ ctx: {}, policy: new Policy(compiled, { probes: false }, quiet), settingsPath: path, report: () => {}, emit: () => {}, lifetime: new AbortController().signal, decide: () => ({}) });
  assert.equal(webView(none, 's1'), undefined);
  assert.match(webSet(none, 's1', 'pool', 'main'), /no pools or quota configured/);
});

test('the chip\'s menu of a session no agent runs yet is the module\'s: its saved settings as its first request takes them', async () => {
  const path = join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json');
  await writeFile(path, JSON.stringify({ sessions: {
    fork: { at: 1, parent: 'p', quota: 'off', pool: 'spare', inherited: ['quota', 'pool'] },
    pinned: { at: 1, quota: 'on', pool: 'off', inherited: ['pool'] },
    retired: { at: 1, pool: 'old' },
  } }));
  const q = rules(path);
  await q.load();
  const menu = (enabled, source, pool, poolSource) => ({ defaultEnabled: true, pools: ['main', 'spare'], enabled, source, pool, poolSource });
  assert.deepEqual(webView(q, 'fork'), menu(false, 'inherited', 'spare', 'inherited'), 'its parent\'s settings, said so');
  assert.deepEqual(webView(q, 'session-pinned'), menu(true, 'session', null, 'off'), 'pool off: never changes provider');
  assert.deepEqual(webView(q, 'retired'), menu(true, 'default', null, 'default'), 'a pool the row no longer has is no pool, as the module takes it');
  assert.deepEqual(webView(q, 'unknown'), menu(true, 'default', null, 'default'));
  // Its first request: the live session says what the menu said.
  q.track(agent('a1', 'fork', 'p'));
  assert.deepEqual(webView(q, 'fork'), menu(false, 'inherited', 'spare', 'inherited'));
});

test('a confirmed setting is answered only once it is saved and its audit line written', async () => {
  const { readFile } = await import('node:fs/promises');
  const path = join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json');
  let release;
  const logged = [];
  // An audit log that has not written yet: the answer must wait for it.
  const report = (r) => new Promise((resolve) => { release = () => { logged.push(r); resolve(); }; });
  const q = rules(path, [], report);
  q.track(agent('a1', 'session-s1'));
  let answer;
  const pending = q.answered(webSet(q, 's1', 'pool', 'spare')).then((m) => { answer = m; });
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(answer, undefined, 'no answer before the audit line');
  release();
  await pending;
  assert.deepEqual(logged.map((r) => [r.type, r.pool]), [['quota-pool', 'spare']]);
  assert.match(await readFile(path, 'utf8'), /"session-s1":\{[^}]*"pool":"spare"/, 'the setting is on disk');
  const done = q.answered(poolCommand(q, agent('a1', 'session-s1'), 'main'));
  release();
  assert.match((await done).text, /pool: main \(session\)/);
});

test('a menu choice for a live session runs as the typed command (logged, so the projection folds it); without one it is written directly', async () => {
  const q = rules(join(await mkdtemp(join(tmpdir(), 'quota-')), 'quota-sessions.json'));
  const ran = [];
  q.ctx = { get: (name) => (name === 'commands' ? {
    execute: async (agent, line) => {
      ran.push(line);
      const [name, arg] = line.slice(1).split(' ');
      return { commandId: 'c1', result: name === 'quota-pool' ? poolCommand(q, agent, arg) : quotaCommand(q, agent, arg) };
    },
  } : undefined) };
  const a = agent('a1', 's1');
  q.track(a);
  assert.equal(await webChoose(q, 's1', 'pool', 'spare'), undefined);
  assert.equal(await webChoose(q, 's1', 'quota', 'off'), undefined);
  assert.deepEqual(ran, ['/quota-pool spare', '/quota-retry off']);
  assert.match(describeSession(q, 'a1'), /quota retry: off \(set for this session\)/);
  assert.match(await webChoose(q, 's1', 'pool', 'nope one'), /nope one/, 'refused before any command runs');
  assert.equal(ran.length, 2);
  // A session with no live agent: written as before, no command.
  assert.equal(await webChoose(q, 's9', 'pool', 'off'), undefined);
  assert.equal(ran.length, 2);
  assert.equal(q.settings.get('s9').pool, 'off');
});
