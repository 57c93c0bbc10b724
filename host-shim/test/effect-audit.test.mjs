// Issue #33: an effect's audit record and log line are the module's
// (plugin/codec/audit.go, tested there kind by kind); the shim writes them as
// given. Here a real module's step goes through the subscribers into a real
// audit.jsonl: the lines are the documented ones (docs/audit.md), byte for
// byte but for their time.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../audit.js';
import { carryOut } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { Turns } from '../turns.js';

const A = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const B = { provider: 'mock', model: 'mock-b' };
let compiled;
before(async () => { compiled = await compileModule(); });

test('a step\'s records reach audit.jsonl as documented, and its log lines the logger', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'effect-audit-'));
  try {
    const audit = new AuditLog(join(dir, 'audit.jsonl'), undefined, { strict: true });
    const turns = new Turns();
    turns.note({ agent: { id: 's-1' }, turn: 2, step: 1 });
    const logged = [];
    const env = {
      ctx: { emit() {} }, audit, logger: { info: (...a) => logged.push(a), warn: (...a) => logged.push(a) },
      scheduleWake() {}, probe() {}, healthChanged() {}, where: (agent) => turns.of(agent),
    };
    const policy = new Policy(compiled, { chain: [A, B], probes: false }, { info() {}, warn() {} });
    const now = Date.parse('2026-05-01T10:00:03.120Z');
    policy.decide(now, { kind: 'request', agent: 's-1', proposed: A });
    const out = policy.decide(now, { kind: 'request-error', agent: 's-1', provider: A.provider,
      failure: { code: 'AUTH', status: 401 }, phase: 'after-host', rand: 0 });
    carryOut(out?.effects ?? [], env);
    await audit.flush();
    const lines = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n')
      .map((l) => l.replace(/^\{"at":"[^"]+",/, '{'));
    assert.deepEqual(lines, [
      '{"type":"circuit-open","channel":{"provider":"deepseek-official","model":"deepseek-v4-flash"},"from":"closed","cause":"AUTH","class":"model-unavailable","openUntil":"2026-05-01T10:01:03.120Z"}',
      '{"type":"circuit-open","channel":{"provider":"deepseek-official","model":"*"},"from":"closed","cause":"AUTH","class":"model-unavailable","openUntil":"2026-05-01T10:01:03.120Z"}',
      '{"type":"failover","agent":"s-1","from":{"provider":"deepseek-official","model":"deepseek-v4-flash"},"to":{"provider":"mock","model":"mock-b"},"code":"AUTH","class":"model-unavailable","failovers":1,"maxFailovers":4,"turn":2,"step":1}',
    ]);
    assert.deepEqual(logged, [
      ['%s', 'circuit deepseek-official/deepseek-v4-flash: closed -> open (AUTH)'],
      ['%s', 'circuit deepseek-official/*: closed -> open (AUTH)'],
      ['%s', 'failover deepseek-official/deepseek-v4-flash -> mock/mock-b on AUTH (model-unavailable)'],
    ]);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
