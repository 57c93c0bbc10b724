// A child process for store.test.mjs. It stays up for many rounds: for each
// line `<dir>` on stdin (sent to every child at once) it opens a fresh store
// in dir, makes its writes, and answers `done` (or `fail <why>`).
// argv: kind key [rounds]
//   settings - sets its own session's quota switch and pool (two changes);
//   marks    - marks its own provider exhausted (a 402 in a real module) and
//              saves health.json, where the mark travels;
//   same     - sets one shared session's pool `rounds` times, one write each.
// argv: kill9 key dir - writes into dir until killed (kill9.test.mjs): its
//   own sessions' pools, the backup choice and audit lines, in turn, and
//   prints `ack <store> <key> <value>` only once a write is on disk
//   (and `audit <record>` for a file it set aside).
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const [kind, key, rounds = '1'] = process.argv.slice(2);
const problems = [];
const audit = (r) => { if (/not-saved|set-aside|not-read|unavailable/.test(r.type)) problems.push(r); };

async function round(dir) {
  if (kind === 'settings') {
    const { QuotaSettings } = await import('../quota-settings.js');
    const s = new QuotaSettings(join(dir, 'quota-sessions.json'), audit);
    await s.load();
    s.set(key, 'quota', 'off');
    await s.set(key, 'pool', 'spare');
  } else if (kind === 'marks') {
    const { compileModule, Engine: Policy } = await import('../engine.js');
    const { HealthStore } = await import('../health.js');
    const policy = new Policy(await compileModule(), { probes: false, pools: [{ name: 'main', routes: [{ provider: key, model: 'm' }] }] }, { warn() {} });
    const health = new HealthStore(join(dir, 'health.json'), policy, audit);
    await health.refresh();
    const now = Date.now();
    policy.decide(now, { kind: 'request', agent: 'a', proposed: { provider: key, model: 'm' } });
    policy.decide(now, { kind: 'request-error', agent: 'a', provider: key, phase: 'before-host', rand: 0, failure: { code: 'QUOTA', message: 'Insufficient Balance', status: 402 } });
    await health.save();
    if (health.trouble) throw new Error(health.trouble);
  } else if (kind === 'same') {
    const { QuotaSettings } = await import('../quota-settings.js');
    const s = new QuotaSettings(join(dir, 'quota-sessions.json'), audit);
    await s.load();
    for (let i = 0; i < Number(rounds); i++) await s.set('shared', 'pool', `${key}-${i}`);
  } else {
    throw new Error(`unknown kind ${kind}`);
  }
}

/** The kill -9 writer: never stops by itself; every line it prints is acknowledged and must survive. */
async function untilKilled(dir) {
  const { QuotaSettings } = await import('../quota-settings.js');
  const { StateFile } = await import('../store.js');
  const { AuditLog } = await import('../audit.js');
  // A small cap, so rotation (under its lock) happens under the kills too.
  const log = new AuditLog(join(dir, 'audit.jsonl'), 16 * 1024, { strict: true });
  const say = (line) => new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
  const record = async (r) => {
    if (/set-aside/.test(r.type)) await say(`audit ${JSON.stringify(r)}`);
    if (/not-saved|unwritable|ignored/.test(r.type)) problems.push(r);
    log.write(r);
  };
  const s = new QuotaSettings(join(dir, 'quota-sessions.json'), record);
  await s.load();
  const backup = new StateFile(join(dir, 'backup.json'), { audit: record, setAside: { type: 'backup-set-aside' } });
  await say('ready');
  for (let i = 0; ; i++) {
    problems.length = 0;
    const session = `${key}-${i % 3}`;
    await s.set(session, 'pool', String(i));
    if (problems.length === 0) await say(`ack settings ${session} ${i}`);
    if (i % 2 === 0) {
      const doc = await backup.update((d) => ({ channel: { provider: key, model: String(i) }, v: (Number.isSafeInteger(d?.v) ? d.v : 0) + 1 }));
      await say(`ack backup ${key} ${doc.v}`);
    }
    await log.write({ type: 'quota-pool', session, pool: String(i) });
  }
}

if (kind === 'kill9') {
  await untilKilled(rounds);
}
process.stdout.write('ready\n');
for await (const dir of createInterface({ input: process.stdin })) {
  problems.length = 0;
  try {
    await round(dir);
    process.stdout.write(problems.length ? `fail ${JSON.stringify(problems[0])}\n` : 'done\n');
  } catch (e) {
    process.stdout.write(`fail ${e?.message}\n`);
  }
}
