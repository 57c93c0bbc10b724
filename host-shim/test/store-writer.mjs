// A child process for store.test.mjs. It stays up for many rounds: for each
// line `<dir>` on stdin (sent to every child at once) it opens a fresh store
// in dir, makes its writes, and answers `done` (or `fail <why>`).
// argv: kind key [rounds]
//   settings - sets its own session's quota switch and pool (two changes);
//   marks    - marks its own provider exhausted;
//   same     - sets one shared session's pool `rounds` times, one write each.
import { createInterface } from 'node:readline';
import { join } from 'node:path';

const [kind, key, rounds = '1'] = process.argv.slice(2);
const problems = [];
const audit = (r) => { if (/not-saved|set-aside|not-read/.test(r.type)) problems.push(r); };

async function round(dir) {
  if (kind === 'settings') {
    const { QuotaSettings } = await import('../quota-settings.js');
    const s = new QuotaSettings(join(dir, 'quota-sessions.json'), audit);
    await s.load();
    s.set(key, 'quota', 'off');
    await s.set(key, 'pool', 'spare');
  } else if (kind === 'marks') {
    const { QuotaMarks } = await import('../quota-marks.js');
    const m = new QuotaMarks(join(dir, 'quota-marks.json'), audit);
    await m.load();
    m.note({ channel: { provider: key, model: '*' }, to: 'open', class: 'quota', openUntilMs: Date.now() + 3_600_000 }, Date.now());
    await m.queue;
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
