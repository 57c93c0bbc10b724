// The what-if replay on a real host's audit log: the dead-primary run (429 on
// every request) is recorded, then replayed under another config by the Go
// command `make replay` runs. (DSHR_REPLAY_KEEP=<file> keeps the output and the log.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('a dead primary, recorded in the real host and replayed with failureThreshold 1', async (t) => {
  fp.reset();
  fp.script(PRIMARY.model, ['rate_limit']);
  fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
  // spillAfter 0: three failures on the primary to replay (a spill would leave two).
  const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], spillAfter: 0 } });
  t.after(home.cleanup);

  const r = await runHeadless(home, 'Reply with OK');
  assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
  assert.deepEqual(fp.counts(), { [PRIMARY.model]: 3, [SECONDARY.model]: 1 });

  // Every policy input is in the log, with no prompt text in any of them.
  const inputs = (await auditRecords(home)).filter((a) => a.type === 'input');
  assert.equal(inputs[0].export, 'configure');
  assert.equal(inputs.filter((a) => a.event?.kind === 'request-error').length, 3, 'each of the three failures');
  assert.ok(!JSON.stringify(inputs).includes('Reply with OK'), 'no prompt text in the inputs');

  const other = join(home.dsh, 'other.json');
  await writeFile(other, JSON.stringify({ chain: [PRIMARY, SECONDARY], failureThreshold: 1, spillAfter: 0 }));
  const log = join(home.dsh, 'dsh-resilience/audit.jsonl');
  const { stdout } = await promisify(execFile)('go', ['run', './testhost/cmd/replay', '-log', log, '-config', other], { cwd: ROOT });
  // B fails over at the first failure, where the recording deferred to the host's retries.
  assert.match(stdout, /A \(recorded\): defer\n\s+B \(.*\): retry, .*failover to mock\/mock-b/);
  assert.match(stdout, /B failed .* over \d+ms earlier than A/);
  if (process.env.DSHR_REPLAY_KEEP) await writeFile(process.env.DSHR_REPLAY_KEEP, stdout + '\n--- log\n' + (await import('node:fs')).readFileSync(log, 'utf8'));
});
