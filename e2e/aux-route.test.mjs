// A compaction summary routed off an open channel, in the real host with the
// stock dsh-llm-retry: dsh-compaction-basic sends its summary with
// ctx.llm.stream (purpose compaction) to its configured pair, here the
// primary the agent has just failed over from. The plugin sends it to the
// fallback instead (aux-route.js, policy/aux.go).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('/compact on a session that failed over: the summary goes to the fallback, not the open primary', async (t) => {
  fp.reset();
  fp.script(PRIMARY.model, ['insufficient_balance']);
  fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the fallback' }]);
  // The primary stays open across the two runs (health.json): a long first open time.
  const home = await makeHome({
    baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], probes: false, cooldownMs: 1_800_000 }, primaryRetry: 'stock', secondaryRetry: 'stock',
    extraPlugins: [{ dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config: { resumeCommands: ['/compact'] } }],
  });
  t.after(home.cleanup);
  // Its summary target is the primary; a tiny retained tail so there is something to summarise.
  await writeFile(join(home.dsh, 'cordis.patch.yml'), [
    '- id: compaction-basic',
    `  config: { summarizationProvider: ${PRIMARY.provider}, summarizationModel: ${PRIMARY.model}, retainTokens: 1 }`,
    '',
  ].join('\n'));
  const first = await runHeadless(home, 'Reply with OK');
  assert.equal(first.stdout.trim(), 'answer from the fallback', first.stderr);
  // The second run resumes the first session (idle) and types /compact on it.
  const dir = join(home.dsh, 'command-runner');
  await writeFile(join(dir, 'previous-session.txt'), await readFile(join(dir, 'session.txt'), 'utf8'));
  fp.script(SECONDARY.model, [{ kind: 'success', text: 'second run' }, { kind: 'success', text: 'the summary' }]);
  const second = await runHeadless(home, 'Reply with OK again');
  assert.equal(second.stdout.trim(), 'second run', second.stderr);

  const results = (await readFile(join(dir, 'results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  const routed = (await auditRecords(home)).filter((a) => a.type === 'aux-routed');
  assert.equal(routed.length, 1, `the compaction call was routed (results: ${JSON.stringify(results)})`);
  assert.deepEqual([routed[0].purpose, routed[0].from, routed[0].to], ['compaction', PRIMARY, SECONDARY]);
  assert.equal(fp.counts()[PRIMARY.model], 1, 'the primary saw only the first run\'s first request');
  assert.equal(results.at(-1).result.result.kind, 'success', JSON.stringify(results));
});
