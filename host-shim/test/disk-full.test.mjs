// A full disk under the state directory, on a real 256 KiB tmpfs (mounting
// needs root: the test is skipped without it). The audit log keeps whole
// lines only, the state stores say `state-unwritable` once for the outage,
// keep what they could not write, and write it when space returns.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from '../audit.js';
import { KeyedStore } from '../keyed-store.js';

let dir;
let mounted = false;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'disk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir], { stdio: 'ignore' });
    mounted = true;
  } catch { /* not root, or no mount in this sandbox */ }
});
after(async () => {
  if (mounted) execFileSync('umount', [dir]);
  await rm(dir, { recursive: true, force: true });
});

/** Fills the filesystem to the last byte. */
async function fill(path) {
  const { open } = await import('node:fs/promises');
  const fh = await open(path, 'w');
  try {
    for (let chunk = 64 * 1024; chunk >= 1;) {
      try {
        const { bytesWritten } = await fh.write(Buffer.alloc(chunk));
        if (bytesWritten < chunk) chunk = Math.floor(chunk / 2);
      } catch (e) {
        if (e.code !== 'ENOSPC') throw e;
        chunk = Math.floor(chunk / 2);
      }
    }
  } finally {
    await fh.close();
  }
}

const lines = async (path) => (await readFile(path, 'utf8')).split('\n');

test('a full disk: whole audit lines only, state-unwritable once, and every write lands when space returns', async (t) => {
  if (!mounted) return t.skip('cannot mount a tmpfs here');
  const audit = new AuditLog(join(dir, 'audit.jsonl'));
  const store = new KeyedStore(join(dir, 'quota-sessions.json'), { records: { setAside: { type: 'quota-settings-set-aside' }, notRead: { type: 'quota-settings-ignored' }, notSaved: { type: 'quota-settings-not-saved' }, saved: { type: 'quota-settings-saved' } }, field: 'sessions', audit: (r) => audit.write(r) });
  await store.change('before', () => ({ quota: 'off' }));
  // A little space left: lines of ~1 KB fill it mid-line.
  await fill(join(dir, 'filler'));
  await rm(join(dir, 'filler'));
  await fill(join(dir, 'filler'));
  const { truncate, stat } = await import('node:fs/promises');
  await truncate(join(dir, 'filler'), (await stat(join(dir, 'filler'))).size - 3000);
  for (let i = 0; i < 20; i++) await audit.write({ type: 'filler', i, pad: 'x'.repeat(1000) });
  assert.ok(audit.failures > 0, 'the disk filled');
  const full = await lines(join(dir, 'audit.jsonl'));
  assert.equal(full.at(-1), '', 'the log ends with a whole line');
  for (const l of full.slice(0, -1)) JSON.parse(l);

  await store.change('during-1', () => ({ pool: 'main' }));
  await store.change('during-2', () => ({ pool: 'spare' }));
  await audit.flush();

  await rm(join(dir, 'filler'));
  await store.change('after', () => ({ quota: 'on' }));
  await audit.write({ type: 'after' });
  const { sessions } = JSON.parse(await readFile(join(dir, 'quota-sessions.json'), 'utf8'));
  assert.deepEqual(Object.keys(sessions).sort(), ['after', 'before', 'during-1', 'during-2'], 'nothing acknowledged during the outage was lost');
  const records = (await lines(join(dir, 'audit.jsonl'))).filter(Boolean).map((l) => JSON.parse(l));
  assert.deepEqual(records.filter((r) => r.type.startsWith('state-')).map((r) => r.type), ['state-unwritable', 'state-writable'], 'once per outage');
  assert.equal(records.find((r) => r.type === 'state-unwritable').code, 'ENOSPC');
  assert.deepEqual(records.filter((r) => r.type.startsWith('quota-settings-')).map((r) => r.type), ['quota-settings-not-saved', 'quota-settings-saved']);
  assert.equal(records.filter((r) => r.type === 'filler').length, 20, 'the lines of the outage were written when space returned');
  assert.equal(records.at(-1).type, 'after');
});
