// The way over for the two plugins whose headline scenario is not in
// migrate.test.mjs, in the real host with the STOCK dsh-llm-retry: the
// plugin's documented row -> the installed `dsh-resilience migrate` -> the
// printed patch pasted as printed -> its headline scenario. dsh-reconnect: a
// transient outage longer than the host's own retries ridden out on the only
// route (persistent, no chain); dsh-llm-quota-retry: a pool failover and a
// long-term wait in one turn. And the master switch: `enabled: false`
// observes nothing and changes nothing.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';

const ours = (events) => events.filter((e) => e.type === 'llm/retry' && e.data.policyKey === '["dsh-resilience"]');
const lines = async (path) => (await readFile(path, 'utf8').catch(() => '')).split('\n').filter(Boolean).map((l) => JSON.parse(l));

/** Runs the installed CLI on an old row and returns the patch it printed, and its table. */
async function migrated(home, oldRow) {
  const old = join(home.dir, 'old.patch.yml');
  await writeFile(old, oldRow);
  const cli = join(home.dsh, 'profiles', 'headless', 'node_modules', 'dsh-resilience', 'bin', 'dsh-resilience.js');
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'migrate', old], { env: home.env({ DSH_HOST_DIR: process.env.DSH_HOST_DIR }) });
  assert.doesNotMatch(stderr, /refuses/, 'the printed row is one the module takes');
  const [patch, table] = stdout.split('\n\n');
  return { patch, table };
}

describe('migrating: the headline scenarios of reconnect and quota-retry', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('dsh-reconnect: its documented row becomes persistent; an outage past the host\'s retries is ridden out on the only route', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock' });
    t.after(home.cleanup);
    // dsh-reconnect's documented defaults, as its Config({}) has them.
    const { patch, table } = await migrated(home, '- id: dsh-reconnect\n  config:\n    maxDelayMs: 60000\n    retryQuota: false\n    retryUnknown: true\n    unknownMaxRetries: 3\n');
    assert.match(patch, /persistent: true/);
    assert.doesNotMatch(patch, /chain:/, 'no chain: the only route is waited on');
    assert.match(table, /dsh-reconnect +maxDelayMs +60000 +backoffMaxMs +60000/);
    await writeFile(join(home.dsh, 'cordis.patch.yml'), `${patch}\n`);
    // Eight 500s: the stock dsh-llm-retry spends its five retries on the first six and ends the
    // turn without the plugin; persistent retries the rest.
    fp.reset();
    fp.script(PRIMARY.model, [...Array(8).fill('server_error'), { kind: 'success', text: 'the route is back' }]);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'the route is back', r.stderr);
    assert.equal(r.code, 0);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 9 }, 'every attempt on the one route');
    const waits = ours(await sessionEvents(home));
    assert.ok(waits.length >= 1, 'the plugin\'s own waits are llm/retry rows');
    assert.ok(waits.every((e) => e.data.provider === PRIMARY.provider && e.data.delayMs <= 60_000), JSON.stringify(waits.map((e) => e.data)));
    const audit = await auditRecords(home);
    assert.equal(audit.filter((a) => a.type === 'give-up' || a.type === 'failover').length, 0, 'never given up, never moved');
    const boot = audit.filter((a) => a.type === 'boot').at(-1);
    assert.deepEqual(boot.chain, [], 'the pasted row is the one running');
  });

  test('dsh-llm-quota-retry: its pools map migrated; a spent route fails over in its pool, the spent pool waits long-term, then recovers', async (t) => {
    const runner = { dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config: { service: { pool: 'main' } } };
    const home = await makeHome({ baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock', extraPlugins: [runner] });
    t.after(home.cleanup);
    const { patch, table } = await migrated(home, [
      '- id: llm-quota-retry',
      '  config:',
      '    pools:',
      '      main:',
      `        - { provider: ${PRIMARY.provider}, model: ${PRIMARY.model} }`,
      `        - { provider: ${SECONDARY.provider}, model: ${SECONDARY.model} }`,
      '    longTermDelayMs: 1500',
      '',
    ].join('\n'));
    assert.match(table, /dsh-llm-quota-retry +pools .* +pools /);
    assert.match(patch, /- id: llm-quota-retry\n {2}disabled: true/);
    // The printed row beside the command runner's own row (it reads the service and events).
    await writeFile(join(home.dsh, 'cordis.patch.yml'), `${patch}\n`);
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance', { kind: 'success', text: 'recovered on the first route' }]);
    fp.script(SECONDARY.model, ['usage_cap_zh']);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'recovered on the first route', r.stderr);
    assert.equal(r.code, 0);
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const audit = await auditRecords(home);
    const routed = audit.find((a) => a.type === 'quota-routed');
    assert.deepEqual([routed.from.model, routed.to.model, routed.pool], [PRIMARY.model, SECONDARY.model, 'main'], 'pool failover');
    const waits = ours(await sessionEvents(home));
    assert.deepEqual(waits.map((e) => e.data.delayMs), [1500], 'one long-term wait of longTermDelayMs');
    const heard = await lines(join(home.dsh, 'command-runner/events.jsonl'));
    assert.ok(heard.some((e) => e.event === 'llm-quota-retry/failover'));
    assert.ok(heard.some((e) => e.event === 'llm-quota-retry/entered'));
    assert.equal(heard.find((e) => e.event === 'llm-quota-retry/left')?.payload.reason, 'recovered');
  });

  test('enabled: false observes nothing and changes nothing: no failover, no wait, no file', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { enabled: false, chain: [PRIMARY, SECONDARY] }, primaryRetry: 'stock', secondaryRetry: 'stock' });
    t.after(home.cleanup);
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'must not be asked' }]);

    const r = await runHeadless(home, 'Reply with OK');

    assert.notEqual(r.stdout.trim(), 'must not be asked');
    assert.match(r.stderr, /QUOTA/, 'the host\'s own failure ends the task');
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 1 }, 'the chain is not used');
    assert.equal(ours(await sessionEvents(home)).length, 0);
    assert.equal(existsSync(join(home.dsh, 'dsh-resilience', 'audit.jsonl')), false, 'nothing written');
  });
});
