// Kill -9 at random points under load (issue #22): writer processes of one
// state directory keep changing their sessions' quota settings, the backup
// choice and the audit log; one at a time is killed with SIGKILL at a random
// moment (mid-lock, mid-write, mid-rename, mid-append) and replaced, 100
// times. After each kill: every state file parses (or was set aside, with an
// audit record), every audit line parses, and every write a writer
// acknowledged is on disk. Store-writer processes stand in for whole hosts:
// they run the hosts' own store code (quota-settings.js, store.js, lock.js,
// audit.js) and start in ~0.1 s where a host takes seconds, so 100 kills fit
// in `make test`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const WRITER = new URL('./store-writer.mjs', import.meta.url).pathname;
const KILLS = 100;
const LANES = 3; // writers alive at once: the others' writes are the load

test(`${KILLS} writers killed with SIGKILL at random points: every file parses, no acknowledged write lost`, async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'kill9-'));
  const acked = new Map(); // `settings <session>` -> highest pool acked; 'backup' -> highest v acked
  const setAsideAudits = [];
  let rng = 0x9e3779b9; // deterministic kill points: a failure can be replayed
  const random = () => ((rng = (Math.imul(rng, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  let spawned = 0;
  let kills = 0;
  const killedAfterAcks = [];

  /** One writer, killed after a random number of its acknowledgements plus a random delay. */
  async function life() {
    const key = `w${spawned++}`;
    const p = spawn(process.execPath, [WRITER, 'kill9', key, dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    const exited = new Promise((resolve) => p.on('exit', (code, signal) => resolve({ code, signal })));
    const acksBeforeKill = Math.floor(random() * 12);
    const delayMs = random() * 15;
    let acks = 0;
    let killed;
    const killNow = () => { killed ??= setTimeout(() => p.kill('SIGKILL'), delayMs); };
    for await (const line of createInterface({ input: p.stdout })) {
      const [what, a, b, c] = line.split(' ');
      if (what === 'ready' && acksBeforeKill === 0) killNow();
      if (what === 'audit') setAsideAudits.push(JSON.parse(line.slice(6)));
      if (what !== 'ack') continue;
      const id = a === 'settings' ? `settings ${b}` : 'backup';
      acked.set(id, Math.max(acked.get(id) ?? -1, Number(c)));
      if (++acks >= acksBeforeKill) killNow();
    }
    const end = await exited;
    assert.equal(end.signal, 'SIGKILL', `writer ${key} ended by itself: ${JSON.stringify(end)}`);
    killedAfterAcks.push(acks);
    kills++;
  }

  // A file listed can be gone when read: the audit log rotates (audit.jsonl
  // becomes audit.jsonl.1) and a corrupt file is set aside while the other
  // lanes' writers go on. Gone is fine; what is there must parse.
  const readIfThere = (f) => readFile(join(dir, f), 'utf8').catch((e) => {
    if (e.code === 'ENOENT') return undefined;
    throw e;
  });

  /** What must hold after every kill. */
  async function check() {
    // What was acknowledged before the files are read (the other lanes' writers go on meanwhile).
    const expected = [...acked];
    const files = await readdir(dir);
    for (const f of files.filter((f) => f.endsWith('.json'))) {
      const text = await readIfThere(f);
      if (text === undefined) continue;
      assert.doesNotThrow(() => JSON.parse(text), `${f} parses after kill ${kills}: ${text.slice(0, 200)}`);
    }
    for (const f of files.filter((f) => f.includes('.corrupt-'))) {
      assert.ok(setAsideAudits.some((r) => r.file === join(dir, f)), `${f} set aside with an audit record`);
    }
    for (const f of files.filter((f) => /^audit\.jsonl(\.1)?$/.test(f))) {
      const text = await readIfThere(f);
      if (text === undefined) continue;
      const lines = text.split('\n');
      assert.equal(lines.pop(), '', `${f} ends with a whole line after kill ${kills}`);
      for (const l of lines) assert.doesNotThrow(() => JSON.parse(l), `${f}: a torn line after kill ${kills}: ${l.slice(0, 200)}`);
    }
    const sessions = JSON.parse(await readFile(join(dir, 'quota-sessions.json'), 'utf8').catch(() => '{}')).sessions ?? {};
    const backup = JSON.parse(await readFile(join(dir, 'backup.json'), 'utf8').catch(() => '{}'));
    for (const [id, value] of expected) {
      if (id === 'backup') assert.ok(backup.v >= value, `backup v ${backup.v} after v ${value} was acknowledged`);
      else assert.ok(Number(sessions[id.slice(9)]?.pool) >= value, `${id}: pool ${sessions[id.slice(9)]?.pool} on disk, ${value} acknowledged`);
    }
  }

  const lanes = Array.from({ length: LANES }, async () => {
    while (spawned < KILLS) {
      await life();
      await check();
    }
  });
  await Promise.all(lanes);
  await check();
  const leftovers = (await readdir(dir)).filter((f) => /\.(tmp|new)$|\.lock$/.test(f));
  t.diagnostic(`${kills} kills after 0-11 acks each (mean ${(killedAfterAcks.reduce((a, b) => a + b, 0) / kills).toFixed(1)}); ` +
    `${acked.size} keys acknowledged; ${setAsideAudits.length} files set aside; left behind by the kills: ${leftovers.length} temp/lock files`);
  assert.equal(kills, KILLS);
});
