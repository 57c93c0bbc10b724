// A wrong or revoked key on one provider, in the real host with its stock
// retries: the turn moves to a provider whose key works, never to another
// model behind the same key (policy/credential.go).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, PRIMARY_PRO, runHeadless, SECONDARY } from './harness.mjs';

const INVALID_KEY = { kind: 'status', status: 401, message: 'Authentication Fails, Your api key: ****abcd is invalid' };

describe('a refused key in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('401 on the primary: fails over to the other provider, past the sibling model', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [INVALID_KEY]);
    fp.script(PRIMARY_PRO.model, [INVALID_KEY]);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answered with a working key' }]);
    const home = await makeHome({
      baseURL: fp.baseURL, plugin: { chain: [PRIMARY, PRIMARY_PRO, SECONDARY] }, primaryRetry: 'stock', secondaryRetry: 'stock',
    });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answered with a working key', r.stderr);
    assert.equal(r.code, 0);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1 }, 'one refusal, no host retry, the sibling never tried');
    const audit = await auditRecords(home);
    const failover = audit.find((a) => a.type === 'failover');
    assert.deepEqual([failover.from, failover.to, failover.code, failover.class], [PRIMARY, SECONDARY, 'AUTH', 'model-unavailable']);
    assert.ok(audit.some((a) => a.type === 'circuit-open' && a.channel.provider === PRIMARY.provider && a.channel.model === '*'),
      'the provider opened: its key is refused for every model');
  });

  test('401 with only the same provider to go to: handed back at once, not waited on', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [INVALID_KEY]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, PRIMARY_PRO] }, primaryRetry: 'stock' });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.code, 1);
    assert.match(r.stderr, /AUTH|api key/i);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 });
    const giveUp = (await auditRecords(home)).find((a) => a.type === 'give-up');
    assert.equal(giveUp.reason, 'not-recoverable');
  });
});
