import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../audit.js';
import { Waits } from '../wait.js';

test('a wait ends at once, false, when its signal aborts', async () => {
  const waits = new Waits();
  const ac = new AbortController();
  const started = Date.now();
  const p = waits.sleep(60_000, ac.signal);
  ac.abort();
  assert.equal(await p, false);
  assert.ok(Date.now() - started < 5_000);
});

test('dispose ends every wait, and later waits end at once', async () => {
  const waits = new Waits();
  const a = waits.sleep(60_000);
  const b = waits.sleep(60_000, new AbortController().signal);
  waits.dispose();
  assert.deepEqual(await Promise.all([a, b]), [false, false]);
  assert.equal(await waits.sleep(60_000), false);
});

test('a wait that runs out resolves true', async () => {
  assert.equal(await new Waits().sleep(5), true);
});

test('the audit log rotates to one .1 generation at its cap, keeping order', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'audit-'));
  const log = new AuditLog(join(dir, 'nested', 'audit.jsonl'), 1000);
  for (let i = 0; i < 40; i++) log.write({ type: 'retry', n: i });
  await log.flush();
  const current = (await readFile(join(dir, 'nested', 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  const older = (await readFile(join(dir, 'nested', 'audit.jsonl.1'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  assert.ok((await stat(join(dir, 'nested', 'audit.jsonl'))).size <= 1000);
  assert.equal(current.at(-1).n, 39);
  assert.equal(older.at(-1).n + 1, current[0].n, 'no line lost between generations');
  assert.equal(log.failures, 0);
});

test('a write failure is counted, never thrown', async () => {
  // A directory under a regular file: ENOTDIR on every write.
  const log = new AuditLog('/etc/hostname/sub/audit.jsonl');
  await log.write({ type: 'boot' });
  assert.equal(log.failures, 1);
});

test('processes sharing one audit log rotate once per full file: no generation is lost', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'audit-'));
  const path = join(dir, 'audit.jsonl');
  // Four writers (as four host processes would), each knowing only its own lines.
  const logs = Array.from({ length: 4 }, () => new AuditLog(path, 2000));
  for (let i = 0; i < 30; i++) for (const [w, log] of logs.entries()) log.write({ type: 'retry', w, n: i });
  await Promise.all(logs.map((l) => l.flush()));
  const lines = async (p) => (await readFile(p, 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  const older = await lines(`${path}.1`);
  const current = await lines(path);
  assert.ok((await stat(`${path}.1`)).size > 2000 - 200, 'the kept generation is a full one, not a few lines');
  assert.ok((await stat(path)).size <= 2000 + 200);
  assert.equal(older.length + current.length >= Math.floor(2000 / 60), true);
  assert.deepEqual(logs.map((l) => l.failures), [0, 0, 0, 0]);
  assert.equal((await stat(path)).mode & 0o777, 0o600);
});
