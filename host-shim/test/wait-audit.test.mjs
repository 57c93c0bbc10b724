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
