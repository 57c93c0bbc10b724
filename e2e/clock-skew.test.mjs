// Hosts of one DSH_HOME whose clocks disagree (policy/merge.go, RATIONALE.md
// "Clocks"). The shim's clock takes a test-only offset
// (DSH_RESILIENCE_TEST_CLOCK_OFFSET_MS, host-shim/clock.js), so one host runs
// 10 minutes ahead of the other, as a host without NTP does. The primary
// trips on its first failure and is held for its cooldown, here 1 ms: its open
// time is over the moment it is written, on the writer's own clock.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

const TEN_MIN = 10 * 60_000;

describe('hosts sharing health with skewed clocks', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  for (const offset of [0, TEN_MIN]) {
    test(`a trip written by a host ${offset ? '10 min ahead' : 'in step (control)'} holds the healthy primary no longer than its writer saw`, async (t) => {
      fp.reset();
      fp.script(PRIMARY.model, ['insufficient_balance']);
      fp.script(SECONDARY.model, [{ kind: 'success', text: 'answered by the secondary' }]);
      // recovery stay: with a 1 ms open time, `return` would send the failed-over request straight
      // back to the spent primary (its open time long over), failover after failover, until the budget.
      const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], providerThreshold: 0, probes: false, cooldownMs: 1, recovery: 'stay' } });
      t.after(home.cleanup);
      const [skewed, other] = await Promise.all([home.copyProfile('skewed'), home.copyProfile('other')]);

      const a = await runHeadless(home, 'Reply with OK', { timeoutMs: 150_000, profile: skewed, env: { DSH_RESILIENCE_TEST_CLOCK_OFFSET_MS: String(offset) } });
      // How the skewed host's own turn ended is not the point here: with a 1 ms open time its
      // failed-over attempt may find the primary routable again and bounce back to it, failover
      // after failover until the budget (measured under load). What matters is the record it wrote.
      t.diagnostic(`the skewed host's run: exit ${a.code}, ${JSON.stringify(a.stdout.trim())}`);
      const health = JSON.parse(await readFile(join(home.dsh, 'dsh-resilience', 'health.json'), 'utf8'));
      const rec = health.channels.find((c) => c.channel.model === PRIMARY.model);
      t.diagnostic(`the skewed host's record: ${JSON.stringify(rec)}, now ${Date.now()}`);
      assert.equal(rec?.state, 'open', `the skewed host tripped the spent primary: ${JSON.stringify(health)}`);
      if (offset) assert.ok(rec.changedAtMs > Date.now() + offset / 2, `written on the skewed clock: ${JSON.stringify(rec)}`);

      // The primary is healthy again; the other host, on the true clock, reads the record.
      fp.reset();
      fp.script(PRIMARY.model, [{ kind: 'success', text: 'answered by the primary' }]);
      const b = await runHeadless(home, 'Reply with OK', { timeoutMs: 150_000, profile: other });
      assert.equal(b.code, 0, b.stderr);
      assert.equal(b.stdout.trim(), 'answered by the primary',
        'the writer saw the primary open for 1 ms; a clock 10 min ahead must not hold it open here for 10 more');
      assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 });
    });
  }
});
