// /resilience and the plugin's Cordis events, in the real host: the command
// runs through the host's command service, and another plugin hears the events.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

const runner = (commands) => ({ dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config: { commands } });
const lines = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('/resilience shows the tripped channel; backup is tried first; other plugins hear every event', async (t) => {
  fp.reset();
  fp.script(PRIMARY.model, ['insufficient_balance']);
  fp.script(SECONDARY.model, [{ kind: 'success', text: 'from the secondary' }]);
  fp.script('mock-a', [{ kind: 'success', text: 'from the backup' }]);
  const h = await makeHome({
    baseURL: fp.baseURL,
    plugin: { chain: [PRIMARY, SECONDARY], probes: false },
    extraPlugins: [runner(['/resilience', '/resilience backup mock/mock-a', '/resilience backup nonsense'])],
  });
  t.after(h.cleanup);

  const started = Date.now();
  const r = await runHeadless(h, 'Reply with OK');
  assert.equal(r.stdout.trim(), 'from the secondary', r.stderr);

  const results = await lines(join(h.dsh, 'command-runner/results.jsonl'));
  assert.equal(results.length, 3);
  const [show, backup, bad] = results.map((x) => x.result.result); // execute answers {commandId, result}
  assert.equal(show.kind, 'success');
  assert.match(show.text, /chain: deepseek-official\/deepseek-v4-flash → mock\/mock-b/);
  assert.match(show.text, /deepseek-official\/deepseek-v4-flash\s+open\s+1\s+1\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\s+QUOTA/);
  assert.match(backup.text, /backup: mock\/mock-a/);
  assert.equal(bad.kind, 'error');
  assert.match(bad.text, /not provider\/model/);

  const events = await lines(join(h.dsh, 'command-runner/events.jsonl'));
  const failover = events.find((e) => e.event === 'failover');
  assert.deepEqual([failover.payload.from.model, failover.payload.to.model, failover.payload.code, failover.payload.class],
    [PRIMARY.model, SECONDARY.model, 'QUOTA', 'quota']);
  assert.ok(events.some((e) => e.event === 'circuit-opened' && e.payload.channel.model === PRIMARY.model && e.payload.openUntilMs > started + 30_000),
    'an open time half the default minute or more beyond the run\'s start (not beyond its end: a loaded run can outlast it)');

  // The next host: the primary is still open, and the user's backup comes before the chain.
  const again = await runHeadless(h, 'Reply with OK');
  assert.equal(again.stdout.trim(), 'from the backup', again.stderr);
  assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1, [SECONDARY.model]: 1, 'mock-a': 1 });
});
