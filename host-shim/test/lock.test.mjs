import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { LockTimeout, withLock } from '../lock.js';

const tmp = () => mkdtemp(join(tmpdir(), 'lock-'));
const pause = (ms) => new Promise((r) => setTimeout(r, ms));

test('one holder at a time, in one process and across processes', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  const counter = join(dir, 'counter');
  await writeFile(counter, '0');
  // Unlocked, this read-increment-write loses updates between the processes.
  const bump = async () => {
    const n = Number(await readFile(counter, 'utf8'));
    await pause(1);
    await writeFile(counter, String(n + 1));
  };
  const child = `
    const { withLock } = await import(${JSON.stringify(new URL('../lock.js', import.meta.url).href)});
    const { readFile, writeFile } = await import('node:fs/promises');
    for (let i = 0; i < 20; i++) await withLock(${JSON.stringify(lock)}, async () => {
      const n = Number(await readFile(${JSON.stringify(counter)}, 'utf8'));
      await new Promise((r) => setTimeout(r, 1));
      await writeFile(${JSON.stringify(counter)}, String(n + 1));
    });`;
  const kids = [1, 2].map(() => new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: 'inherit' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
  }));
  await Promise.all([...kids, ...Array.from({ length: 20 }, () => withLock(lock, bump))]);
  assert.equal(Number(await readFile(counter, 'utf8')), 60);
  assert.deepEqual(await readdir(dir), ['counter'], 'the lock file is gone');
});

test('a lock left by a process that is gone is taken over at once', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  const dead = spawn(process.execPath, ['-e', '0']);
  await new Promise((r) => dead.on('exit', r));
  await writeFile(lock, `${dead.pid} ${hostname()} ${Date.now()}\n`);
  const started = Date.now();
  assert.equal(await withLock(lock, async () => 'ran', { waitMs: 5_000 }), 'ran');
  assert.ok(Date.now() - started < 2_000);
});

test('a lock older than staleMs is taken over; a young one is waited for, then LockTimeout', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  await writeFile(lock, `${process.pid} elsewhere ${Date.now()}\n`); // alive, or on another machine
  await assert.rejects(withLock(lock, async () => 'ran', { staleMs: 60_000, waitMs: 200 }), LockTimeout);
  const old = (Date.now() - 120_000) / 1000;
  await utimes(lock, old, old);
  assert.equal(await withLock(lock, async () => 'ran', { staleMs: 60_000, waitMs: 2_000 }), 'ran');
  assert.deepEqual(await readdir(dir), []);
});

test('a live holder on this machine is aged on the monotonic clock, not by mtime against a wall clock', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  const monoNow = () => Number(process.hrtime.bigint() / 1_000_000n);
  // Held just now by a live process of this machine, its mtime ten minutes old (as a waiter
  // whose wall clock runs ten minutes ahead sees it): not stale.
  await writeFile(lock, `${process.pid} ${hostname()} ${monoNow()} abc123\n`);
  const old = (Date.now() - 600_000) / 1000;
  await utimes(lock, old, old);
  await assert.rejects(withLock(lock, async () => 'ran', { staleMs: 60_000, waitMs: 200 }), LockTimeout);
  // Held for two minutes on the monotonic clock, its mtime fresh (a wall clock stepped back): stale.
  await writeFile(lock, `${process.pid} ${hostname()} ${monoNow() - 120_000} abc123\n`);
  assert.equal(await withLock(lock, async () => 'ran', { staleMs: 60_000, waitMs: 2_000 }), 'ran');
  assert.deepEqual(await readdir(dir), []);
});

test('a task that throws releases the lock', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  await assert.rejects(withLock(lock, async () => { throw new Error('boom'); }), /boom/);
  assert.equal(await withLock(lock, async () => 'again', { waitMs: 100 }), 'again');
});

test('an empty or unreadable lock file (a crash or a full disk between create and write) is stale at once', async () => {
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  await writeFile(lock, ''); // fresh: its mtime is now, far from staleMs
  assert.equal(await withLock(lock, async () => 'ran', { staleMs: 600_000, waitMs: 5_000 }), 'ran');
  await writeFile(lock, '12'); // half a line
  assert.equal(await withLock(lock, async () => 'ran', { staleMs: 600_000, waitMs: 5_000 }), 'ran');
  const { mkdir } = await import('node:fs/promises');
  await mkdir(lock); // cannot be read as a file at all
  assert.equal(await withLock(lock, async () => 'ran', { staleMs: 600_000, waitMs: 5_000 }), 'ran');
  assert.deepEqual(await readdir(dir), []);
});

test('a live lock is never taken over by a waiter that judged its predecessor gone', async () => {
  // Holders that release and exit at once, many waiters: the race that lost
  // writes when an inode number was reused by the next lock.
  const dir = await tmp();
  const lock = join(dir, 'x.lock');
  const counter = join(dir, 'counter');
  await writeFile(counter, '0');
  const child = `
    const { withLock } = await import(${JSON.stringify(new URL('../lock.js', import.meta.url).href)});
    const { readFile, writeFile } = await import('node:fs/promises');
    await withLock(${JSON.stringify(lock)}, async () => {
      const n = Number(await readFile(${JSON.stringify(counter)}, 'utf8'));
      await writeFile(${JSON.stringify(counter)}, String(n + 1));
    });
    process.exit(0);`;
  await Promise.all(Array.from({ length: 24 }, () => new Promise((resolve, reject) => {
    const p = spawn(process.execPath, ['--input-type=module', '-e', child], { stdio: 'inherit' });
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`child exited ${code}`))));
  })));
  assert.equal(Number(await readFile(counter, 'utf8')), 24);
});
