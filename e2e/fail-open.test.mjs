// A broken policy module must never cost the user their turn: with a module
// build that traps on every decision (a real trap: the module exits), the host
// behaves exactly as if the plugin were absent, and the failure is audited once.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

// Built by `make build/dsh-resilience-fault.wasm` (a dependency of test-e2e).
const faultWasm = join(ROOT, 'build/dsh-resilience-fault.wasm');
let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

async function homeWithTrappingModule() {
  const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY] } });
  await copyFile(faultWasm, join(home.dsh, 'profiles/headless/node_modules/dsh-resilience/build/dsh-resilience.wasm'));
  return home;
}

test('a trapping module: the turn completes on the host\'s own retries, failures audited once per kind', async (t) => {
  fp.reset();
  fp.script(PRIMARY.model, ['rate_limit', { kind: 'success', text: 'answered despite the plugin' }]);
  const home = await homeWithTrappingModule();
  t.after(home.cleanup);

  const r = await runHeadless(home, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'answered despite the plugin', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2 }, 'the host retried once, as it would alone');
  const audit = await auditRecords(home);
  const failures = audit.filter((a) => a.type === 'module-failure');
  assert.ok(failures.length >= 1);
  assert.ok(failures.every((f) => f.error === 'TrapError'));
  const kinds = failures.map((f) => f.what);
  assert.equal(new Set(kinds).size, kinds.length, `each kind is logged once: ${kinds}`);
  const stop = audit.find((a) => a.type === 'stop');
  const total = Object.values(stop.moduleFailures).reduce((a, b) => a + b, 0);
  assert.ok(total > failures.length, `later failures are counted, not logged: ${JSON.stringify(stop.moduleFailures)}`);
});
