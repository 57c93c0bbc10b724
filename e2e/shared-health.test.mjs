// Channel health shared by host processes of one DSH_HOME (docs/state.md "Channel
// health"): five real hosts started at once against a primary whose balance
// is spent. Every one of them trips and saves at about the same moment, so
// the read-merge-write lock is what keeps each trip in the file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, PRIMARY_PRO, runHeadless, SECONDARY } from './harness.mjs';

const CHAIN = [PRIMARY, PRIMARY_PRO, SECONDARY];
const HOSTS = 5;

describe('five hosts sharing one DSH_HOME', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('all hit a spent primary at once: every trip is kept, no host pays twice, later hosts pay nothing', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(PRIMARY_PRO.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answered by the secondary' }]);
    // Quota-class failures trip a channel on the first one (a threshold of 1
    // per host); providerThreshold 0 keeps the two models separate records. The
    // open time outlasts both waves: at load 20-40 the first wave alone took over
    // the default minute, and the second then rightly found the trips over.
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: CHAIN, providerThreshold: 0, probes: false, cooldownMs: 1_200_000 } });
    t.after(home.cleanup);
    // One profile per host, all in this one DSH_HOME: a boot rewrites its profile's
    // cordis.yml in place, and a host reading it mid-rewrite dies before asking anything
    // (harness `copyProfile`). The plugin's state is per DSH_HOME, so it is still shared.
    const profiles = await Promise.all(Array.from({ length: HOSTS }, (_, i) => home.copyProfile(`host${i}`)));
    const wave = () => Promise.all(profiles.map((profile) => runHeadless(home, 'Reply with OK', { timeoutMs: 300_000, profile })));

    const runs = await wave();

    for (const r of runs) {
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout.trim(), 'answered by the secondary');
    }
    const counts = fp.counts();
    t.diagnostic(`first wave, requests per model: ${JSON.stringify(counts)}`);
    // Each host may learn each spent channel itself (they start together, before
    // any trip is saved), but never twice: at most the threshold (1) per host.
    assert.ok(counts[PRIMARY.model] >= 1 && counts[PRIMARY.model] <= HOSTS, JSON.stringify(counts));
    assert.ok((counts[PRIMARY_PRO.model] ?? 0) <= HOSTS, JSON.stringify(counts));
    assert.equal(counts[SECONDARY.model], HOSTS);

    const stateDir = join(home.dsh, 'dsh-resilience');
    const health = JSON.parse(await readFile(join(stateDir, 'health.json'), 'utf8')); // valid JSON
    const byModel = Object.fromEntries(health.channels.map((c) => [c.channel.model, c]));
    assert.equal(byModel[PRIMARY.model]?.state, 'open', JSON.stringify(health));
    if (counts[PRIMARY_PRO.model] > 0) assert.equal(byModel[PRIMARY_PRO.model]?.state, 'open', 'every trip is in the file');
    const left = (await readdir(stateDir)).filter((f) => /\.tmp$|\.lock$|\.stale\./.test(f));
    assert.deepEqual(left, [], 'no temp or lock file left behind');

    // One audit log for all five: every line whole, every host booted and stopped.
    const audit = await auditRecords(home); // throws on an interleaved line
    const pids = runs.map((r) => r.pid);
    for (const pid of pids) {
      assert.ok(audit.some((a) => a.type === 'boot' && a.pid === pid), `boot of ${pid}`);
      assert.ok(audit.some((a) => a.type === 'stop' && a.pid === pid), `stop of ${pid}`);
    }
    assert.ok(!audit.some((a) => a.type === 'health-unavailable' || a.type === 'health-set-aside'), JSON.stringify(audit.filter((a) => a.type.startsWith('health'))));

    // A second wave starts after: it reads the shared file and never asks the spent channels.
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(PRIMARY_PRO.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answered by the secondary' }]);
    const again = await wave();
    for (const r of again) assert.equal(r.stdout.trim(), 'answered by the secondary', r.stderr);
    assert.deepEqual(fp.counts(), { [SECONDARY.model]: HOSTS });
  });
});
