// The health file in the real host, when it is not what a well-behaved host
// wrote: a bad record beside a good trip, a far-future open time, a file far
// beyond the size cap. Each run must still answer, trust what is good, and say
// what it set aside.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

const CHAIN = [PRIMARY, SECONDARY];
const record = (channel, extra = {}) => ({ channel, state: 'open', failures: 1, opens: 1,
  openUntilMs: Date.now() + 3_600_000, lastCode: 'QUOTA', changedAtMs: Date.now() - 1_000, ...extra });

describe('a health file that is not what a host wrote', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  async function run(t, text) {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'from the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'from the secondary' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, probes: false } });
    t.after(home.cleanup);
    const dir = join(home.dsh, 'dsh-resilience');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'health.json'), text);
    const r = await runHeadless(home, 'Reply with OK', { timeoutMs: 90_000 });
    return { r, dir, audit: await auditRecords(home) };
  }

  test('one bad record is skipped and audited; the good trip beside it is kept', async (t) => {
    const { r, dir, audit } = await run(t, JSON.stringify({ channels: [
      record(PRIMARY),
      record({ provider: 'x', model: 'y' }, { state: 'ajar' }),
      record({ provider: 'x', model: 'z' }, { lastCode: 'E'.repeat(100_000) }),
    ] }));
    assert.equal(r.stdout.trim(), 'from the secondary', r.stderr);
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: 1 }, 'the primary was never asked');
    const skipped = audit.find((a) => a.type === 'health-skipped');
    assert.equal(skipped?.skipped, 2);
    assert.ok(!audit.some((a) => a.type === 'health-set-aside'));
    assert.ok((await readdir(dir)).every((f) => !f.includes('.corrupt-')));
  });

  test('an open time 35 years away does not spin the wake timer', async (t) => {
    const { r } = await run(t, JSON.stringify({ channels: [record(PRIMARY, { openUntilMs: Date.now() + 2 ** 40 })] }));
    assert.equal(r.stdout.trim(), 'from the secondary', r.stderr);
    assert.doesNotMatch(r.stderr, /TimeoutOverflowWarning/);
    assert.equal(cleanStderr(r.stderr), '');
  });

  test('a 100 MB file is set aside unread, cut to the cap, and the run answers at once', async (t) => {
    const big = JSON.stringify({ channels: [record(PRIMARY, { lastCode: 'X'.repeat(100 * 1024 * 1024) })] });
    const { r, dir, audit } = await run(t, big);
    assert.equal(r.stdout.trim(), 'from the primary', r.stderr);
    const aside = audit.find((a) => a.type === 'health-set-aside');
    assert.match(aside?.reason ?? '', /more than the 4194304 read/);
    const kept = (await readdir(dir)).filter((f) => f.includes('.corrupt-'));
    assert.equal(kept.length, 1);
    assert.equal((await stat(join(dir, kept[0]))).size, 4 * 1024 * 1024, 'the evidence is kept, bounded');
    t.diagnostic(`answered in ${r.ms} ms`);
  });
});
