// A provider whose error bodies quote the credentials they were sent, in the
// real host with its stock retries: the audit log keeps the failures' words
// and none of the keys (policy/redact; the shim hands the module the values
// the host's credential service resolves for each provider's apiKeyEnv).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

// The DeepSeek key has no key shape of its own (short, no `sk-`): only its
// value, resolved through the host, gives it away where it is quoted bare.
const DEEPSEEK_KEY = 'lit-key-0042';
const MOCK_KEY = 'sk-mock0123456789abcdefXYZ';

describe('provider text that quotes the API key, in the real host', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('a 401 and a 500 whose bodies echo the key: audit.jsonl holds the failures, none of the keys', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'status', status: 401, message: `Authentication Fails, your key ${DEEPSEEK_KEY} is invalid`, echoAuth: true }]);
    fp.script(SECONDARY.model, [{ kind: 'status', status: 500, message: 'Internal server error', echoAuth: true }, { kind: 'success', text: 'answered after all' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY] }, primaryRetry: 'stock', secondaryRetry: 'stock' });
    t.after(home.cleanup);

    const r = await runHeadless(home, 'Reply with OK', { env: { DEEPSEEK_API_KEY: DEEPSEEK_KEY, MOCK_API_KEY: MOCK_KEY } });

    assert.equal(r.stdout.trim(), 'answered after all', r.stderr);
    assert.equal(r.code, 0);
    const sent = fp.requests.map((q) => q.model);
    assert.deepEqual(sent, [PRIMARY.model, SECONDARY.model, SECONDARY.model], 'the refusal, the 500, its stock retry');
    const dir = join(home.dsh, 'dsh-resilience');
    for (const name of await readdir(dir)) {
      const text = await readFile(join(dir, name), 'utf8').catch(() => '');
      assert.ok(!text.includes(DEEPSEEK_KEY) && !text.includes(MOCK_KEY), `${name} holds a key:\n${text}`);
    }
    const failures = (await auditRecords(home)).filter((a) => a.type === 'input' && a.event?.kind === 'request-error').map((a) => a.event.failure);
    assert.ok(failures.some((f) => f.code === 'AUTH' && /^Authentication Fails, your key \[redacted\] is invalid .*Authorization: Bearer \[redacted\]/.test(f.message)),
      `the 401's words are kept around the marks: ${JSON.stringify(failures)}`);
    assert.ok(failures.some((f) => f.message?.includes('Authorization: Bearer [redacted]') && f.code !== 'AUTH'),
      `the 500's too: ${JSON.stringify(failures)}`);
  });
});
