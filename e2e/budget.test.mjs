// The failover budget in the real host with its STOCK retry settings: an
// agent that has failed over maxFailovers times without a success gives the
// next failure back (`budget-exhausted`, docs/decisions.md "Giving up") even
// though a channel is still routable, and the headless run ends with it.
//
// Every channel's balance is spent (402, QUOTA: opened at once, no host
// retry). The chain alternates providers so that a channel is still there
// when the budget runs out: the DeepSeek provider opens once two of its
// models have (providerThreshold 2), which leaves mock-b the one routable
// channel after the second failover. maxFailovers 2 keeps the run short;
// giveUpAfterMs 5 s makes a missing budget end the turn at once too (nothing
// routable after mock-b, the soonest back in a minute) instead of waiting
// out the default 15 minutes, so the test tells the two apart by the reason
// and the requests.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, cleanStderr, makeHome, PRIMARY, PRIMARY_PRO, runHeadless, SECONDARY } from './harness.mjs';

const MOCK_A = { provider: 'mock', model: 'mock-a' };
const CHAIN = [PRIMARY, MOCK_A, PRIMARY_PRO, SECONDARY];
const key = (c) => `${c.provider}/${c.model}`;

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('two failovers without a success spend maxFailovers 2: the third failure goes back (budget-exhausted) though mock-b is routable', async (t) => {
  fp.reset();
  for (const c of CHAIN) fp.script(c.model, ['insufficient_balance']);
  const home = await makeHome({ baseURL: fp.baseURL, primaryRetry: 'stock', secondaryRetry: 'stock',
    plugin: { chain: CHAIN, maxFailovers: 2, giveUpAfterMs: 5_000 } });
  t.after(home.cleanup);

  const r = await runHeadless(home, 'Reply with OK');

  assert.equal(r.code, 1, r.stderr);
  assert.equal(r.stdout.trim(), '');
  // One request each: the primary, the two failovers' targets; none to mock-b.
  assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [MOCK_A.model]: 1, [PRIMARY_PRO.model]: 1 }, r.stderr);

  const audit = await auditRecords(home);
  assert.deepEqual(audit.filter((a) => a.type === 'failover').map((a) => [key(a.from), key(a.to), a.failovers]),
    [[key(PRIMARY), key(MOCK_A), 1], [key(MOCK_A), key(PRIMARY_PRO), 2]]);
  const gaveUp = audit.filter((a) => a.type === 'give-up');
  assert.equal(gaveUp.length, 1, JSON.stringify(gaveUp));
  assert.equal(gaveUp[0].reason, 'budget-exhausted');
  assert.deepEqual(gaveUp[0].channel, PRIMARY_PRO, 'the failure that ended the turn');
  assert.equal(gaveUp[0].code, 'QUOTA');
  assert.deepEqual(gaveUp[0].tried.map((x) => [key(x.channel), x.code]), [PRIMARY, MOCK_A, PRIMARY_PRO].map((c) => [key(c), 'QUOTA']));

  // The user is told: each switch, then the give-up with its reason, then the host's own line.
  const lines = cleanStderr(r.stderr).split('\n').filter(Boolean);
  const ours = lines.filter((l) => l.startsWith('dsh-resilience:'));
  assert.deepEqual(ours.slice(0, 2), [
    `dsh-resilience: switched ${key(PRIMARY)} → ${key(MOCK_A)} (QUOTA; failover 1/2 · turn 1 step 1)`,
    `dsh-resilience: switched ${key(MOCK_A)} → ${key(PRIMARY_PRO)} (QUOTA; failover 2/2 · turn 1 step 1)`,
  ], r.stderr);
  assert.match(ours[2], new RegExp(`^dsh-resilience: gave up on ${key(PRIMARY_PRO)}: failover budget spent \\(QUOTA`), r.stderr);
  assert.equal(ours.length, 3, r.stderr);
  assert.match(lines.at(-1), /^dsh: QUOTA/, r.stderr);
});
