// The state stores under concurrency: N host processes of one DSH_HOME write
// at the same moment (each child waits for a line on stdin, sent to all at
// once). Every acknowledged write must be in the file afterwards.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { KeyedStore } from '../keyed-store.js';
import { StateFile } from '../store.js';

const records = (kind) => ({ setAside: { type: `${kind}-set-aside` }, notRead: { type: `${kind}-ignored` }, notSaved: { type: `${kind}-not-saved` }, saved: { type: `${kind}-saved` } });
const WRITER = new URL('./store-writer.mjs', import.meta.url).pathname;
const REPEAT = 20;
const MARK_ROUNDS = 5; // each round runs a module instance per process: fewer, slower rounds
const root = await mkdtemp(join(tmpdir(), 'store-'));
const children = [];
after(() => { for (const c of children) c.kill(); });

/** N writer processes of one kind; `round(dir)` makes them all write into dir at once. */
async function writers(kind, n, rounds) {
  const kids = await Promise.all(Array.from({ length: n }, async (_, i) => {
    const p = spawn(process.execPath, [WRITER, kind, `k${i}`, String(rounds ?? 1)], { stdio: ['pipe', 'pipe', 'inherit'] });
    children.push(p);
    const lines = createInterface({ input: p.stdout })[Symbol.asyncIterator]();
    assert.equal((await lines.next()).value, 'ready');
    return { p, lines };
  }));
  let r = 0;
  return {
    async round() {
      const dir = join(root, `${kind}-${n}-${r++}`);
      await mkdir(dir);
      for (const k of kids) k.p.stdin.write(`${dir}\n`);
      const answers = await Promise.all(kids.map(async (k) => (await k.lines.next()).value));
      assert.deepEqual(answers.filter((a) => a !== 'done'), [], 'every writer acknowledged');
      return dir;
    },
    stop() { for (const k of kids) k.p.stdin.end(); },
  };
}

for (const n of [8, 32]) {
  test(`${n} processes each set a different session's quota settings at once: 0 lost, ${REPEAT} times`, async () => {
    const w = await writers('settings', n);
    const kept = [];
    for (let i = 0; i < REPEAT; i++) {
      const dir = await w.round();
      const { sessions } = JSON.parse(await readFile(join(dir, 'quota-sessions.json'), 'utf8'));
      kept.push(Object.values(sessions).filter((s) => s.quota === 'off' && s.pool === 'spare').length);
    }
    w.stop();
    assert.deepEqual(kept, Array(REPEAT).fill(n), 'sessions kept with both settings, per round');
  });
}

// Marks travel in health.json (the module's provider records, merged under
// the health file's lock): 8 host processes, each a real module instance.
test(`8 processes each mark a different provider exhausted at once, in health.json: 0 lost, ${MARK_ROUNDS} times`, async () => {
  const n = 8;
  const w = await writers('marks', n);
  const kept = [];
  for (let i = 0; i < MARK_ROUNDS; i++) {
    const dir = await w.round();
    const { channels } = JSON.parse(await readFile(join(dir, 'health.json'), 'utf8'));
    kept.push(channels.filter((c) => c.channel.model === '*' && c.markedAtMs > 0).length);
  }
  w.stop();
  assert.deepEqual(kept, Array(MARK_ROUNDS).fill(n));
});

test('8 processes writing one session 10 times each converge: every write applied in turn, one answer for all', async () => {
  const n = 8;
  const rounds = 10;
  const w = await writers('same', n, rounds);
  for (let i = 0; i < 3; i++) {
    const dir = await w.round();
    const { sessions } = JSON.parse(await readFile(join(dir, 'quota-sessions.json'), 'utf8'));
    assert.deepEqual(Object.keys(sessions), ['shared']);
    // The version counts the writes: none was overwritten by a stale copy.
    assert.equal(sessions.shared.v, n * rounds);
    assert.match(sessions.shared.pool, new RegExp(`^k\\d+-${rounds - 1}$`), 'the last write is some writer\'s last');
    const views = await Promise.all([0, 1, 2].map(async () => {
      const s = new KeyedStore(join(dir, 'quota-sessions.json'), { records: records('quota-settings'), field: 'sessions', audit: () => {} });
      await s.load();
      return s.get('shared');
    }));
    assert.deepEqual(views, [sessions.shared, sessions.shared, sessions.shared]);
  }
  w.stop();
});

test('a corrupt state file is set aside, audited, and the next write starts clean', async () => {
  const dir = await mkdtemp(join(root, 'corrupt-'));
  const path = join(dir, 'quota-sessions.json');
  await writeFile(path, '{"sessions": {"a": ');
  const audits = [];
  const s = new KeyedStore(path, { records: records('quota-settings'), field: 'sessions', audit: (r) => audits.push(r) });
  await s.load();
  assert.equal(audits[0]?.type, 'quota-settings-set-aside');
  assert.match(audits[0].reason, /JSON/);
  await s.change('b', () => ({ pool: 'spare' }));
  assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { sessions: { b: { pool: 'spare', v: 1 } } });
  const files = (await readdir(dir)).sort();
  assert.equal(files.length, 2);
  assert.match(files[1], /^quota-sessions\.json\.corrupt-\d+-[0-9a-f]+$/);
  assert.equal(await readFile(join(dir, files[1]), 'utf8'), '{"sessions": {"a": ', 'the bad bytes kept for inspection');
});

test('a file too large is set aside unread; one that is not a file is an error, not a set-aside', async () => {
  const dir = await mkdtemp(join(root, 'large-'));
  const audits = [];
  const f = new StateFile(join(dir, 'x.json'), { setAside: { type: 'x-set-aside' }, audit: (r) => audits.push(r), maxBytes: 100 });
  await writeFile(f.path, JSON.stringify({ pad: 'y'.repeat(200) }));
  assert.equal(await f.load(), undefined);
  assert.equal(audits[0]?.type, 'x-set-aside');
  assert.match(audits[0].reason, /more than the 100/);
  const g = new StateFile(join(dir, 'd.json'), { setAside: { type: 'x-set-aside' }, audit: (r) => audits.push(r) });
  await mkdir(g.path);
  await assert.rejects(g.load(), /not a regular file/);
  assert.equal(audits.length, 1);
});

test('a write that fails is audited once, kept, and lands when the file can be written again', async () => {
  const dir = await mkdtemp(join(root, 'fail-'));
  const path = join(dir, 'sub', 'sessions.json');
  await writeFile(join(dir, 'sub'), 'a file where the directory should be');
  const audits = [];
  const s = new KeyedStore(path, { records: records('quota-settings'), field: 'sessions', audit: (r) => audits.push(r) });
  await s.change('s1', () => ({ quota: 'off' }));
  await s.change('s2', () => ({ quota: 'off' }));
  assert.deepEqual(audits.map((a) => a.type), ['state-unwritable', 'quota-settings-not-saved'], 'once per outage');
  const { rm } = await import('node:fs/promises');
  await rm(join(dir, 'sub'));
  await s.save();
  assert.deepEqual(Object.keys(JSON.parse(await readFile(path, 'utf8')).sessions).sort(), ['s1', 's2']);
  assert.deepEqual(audits.map((a) => a.type), ['state-unwritable', 'quota-settings-not-saved', 'state-writable', 'quota-settings-saved']);
});

test('the backup store: a cleared choice is written (its version goes on), a corrupt file is set aside', async () => {
  const { loadBackup, saveBackup } = await import('../backup.js');
  const dir = await mkdtemp(join(root, 'backup-'));
  const path = join(dir, 'backup.json');
  const audits = [];
  await saveBackup(path, { provider: 'p', model: 'm', extra: 'dropped' });
  assert.deepEqual(await loadBackup(path, (r) => audits.push(r)), { provider: 'p', model: 'm' });
  await saveBackup(path, undefined);
  assert.deepEqual(JSON.parse(await readFile(path, 'utf8')), { channel: null, v: 2 });
  assert.equal(await loadBackup(path, (r) => audits.push(r)), undefined);
  assert.deepEqual(audits, []);
  await writeFile(path, 'not json');
  assert.equal(await loadBackup(path, (r) => audits.push(r)), undefined);
  assert.equal(audits[0]?.type, 'backup-set-aside');
});
