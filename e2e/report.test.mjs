// `/resilience report` in the real host, stock retry settings: an outage
// scripted in the fake provider, two tasks through it, then the report's
// numbers checked against the fake provider's own request log.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';

const P = `${PRIMARY.provider}/${PRIMARY.model}`;
const S = `${SECONDARY.provider}/${SECONDARY.model}`;
const runner = (commands) => ({ dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config: { commands } });
const lines = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('/resilience report: the outage, its failovers and requests, as the provider saw them', async (t) => {
  fp.reset();
  fp.script(PRIMARY.model, ['rate_limit']); // down for the whole test
  fp.script(SECONDARY.model, [{ kind: 'success', text: 'from the secondary' }]);
  const h = await makeHome({
    baseURL: fp.baseURL, primaryRetry: 'stock', secondaryRetry: 'stock',
    // An outage is a breaker's open span: spillAfter 0 lets the failures open the primary
    // rather than move each request off it (the spill has its own tests).
    plugin: { chain: [PRIMARY, SECONDARY], spillAfter: 0 },
    extraPlugins: [runner(['/resilience report', '/resilience report 7d', '/resilience report soon'])],
  });
  t.after(h.cleanup);

  // The first task meets the outage and fails over; the second finds the primary open and is routed round it.
  for (const task of ['Reply with OK', 'Reply with OK again']) {
    const r = await runHeadless(h, task);
    assert.equal(r.stdout.trim(), 'from the secondary', r.stderr);
  }

  // What the provider saw: every request to the failing channel, and the secondary's answers.
  const counts = fp.counts();
  const primaryRequests = counts[PRIMARY.model];
  assert.ok(primaryRequests >= 1, JSON.stringify(counts));
  assert.equal(counts[SECONDARY.model], 2);
  const failovers = (await auditRecords(h)).filter((a) => a.type === 'failover');

  // The second host's run of the commands sees both tasks.
  const results = await lines(join(h.dsh, 'command-runner/results.jsonl'));
  assert.equal(results.length, 6);
  const [day, week, bad] = results.slice(3).map((x) => x.result.result);
  assert.equal(day.kind, 'success');
  assert.equal(week.kind, 'success');
  assert.equal(bad.kind, 'error');
  assert.match(bad.text, /"soon" is not a window/);
  t.diagnostic(`report:\n${day.text}`);
  const firstPrimary = fp.requests.find((q) => q.model === PRIMARY.model).at;
  const firstSecondary = fp.requests.find((q) => q.model === SECONDARY.model).at;
  t.diagnostic(`provider log: ${primaryRequests} primary requests, ${counts[SECONDARY.model]} secondary; `
    + `first primary request to first secondary request ${firstSecondary - firstPrimary} ms`);

  const text = day.text;
  assert.match(text, /^1 incident, 2 sessions affected, 1 failover, 0 give-ups;/m);
  const incident = new RegExp(`#1 ${esc(P)} {2}\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d → still open \\(.+\\) {2}cause RATE_LIMIT \\(transient\\)`);
  assert.match(text, incident);
  // Both sessions were affected (one failed over, one routed round); every primary request failed.
  const numbers = /sessions (\d+) · failovers (\d+) · failed requests (\d+) · time lost (.+)$/m.exec(text);
  assert.ok(numbers, text);
  assert.deepEqual(numbers.slice(1, 4).map(Number), [2, failovers.length, primaryRequests]);
  assert.equal(failovers.length, 1);
  assert.match(text, /stock host: 5 retries over ~16 s, then the turn fails with RATE_LIMIT: [0-2] of 2 turns would have failed/);
  // The channel table: requests per channel as the provider counted them.
  const row = (ch) => new RegExp(`^ {2}${esc(ch)} +([\\d.]+)% +(\\d+) +(\\d+) +(\\d+) `, 'm').exec(text);
  const [, , pReq, pFailed, pFailovers] = row(P);
  const [, sAvail, sReq, sFailed] = row(S);
  assert.deepEqual([pReq, pFailed, pFailovers].map(Number), [primaryRequests, primaryRequests, 1]);
  assert.deepEqual([sAvail, sReq, sFailed], ['100', String(counts[SECONDARY.model]), '0']);
  assert.match(text, new RegExp(`^ {2}${esc(P)} +99\\.9\\d\\d% `, 'm'), 'seconds down in a day is not 100%');
  assert.match(week.text, incident);
});
