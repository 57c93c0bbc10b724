// A child process for store.test.mjs. It stays up for many rounds: for each
// line `<dir>` on stdin (sent to every child at once) it opens a fresh store
// in dir, makes its writes, and answers `done` (or `fail <why>`).
// argv: kind key [rounds]
//   settings - sets its own session's quota switch and pool (two changes);
//   marks    - marks its own provider exhausted (a 402 in a real module) and
//              saves health.json, where the mark travels;
//   same     - sets one shared session's pool `rounds` times, one write each.
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
    const { compileModule, Policy } = await import('../policy.js');
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
