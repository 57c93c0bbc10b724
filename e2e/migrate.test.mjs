// The way over, in the real host with the STOCK dsh-llm-retry: a plugin's
// documented row -> the installed package's `dsh-resilience migrate` -> the
// printed patch pasted, as printed, into the home's cordis.patch.yml -> that
// plugin's headline scenario. dsh-daruma: failover to the backup (and
// `/resilience migrate` in the host); dsh-model-failover: a chain of its
// fallbacks alone still fails the session's own model over to them;
// dsh-plugin-tool-retry: an allow-listed tool repeated, and a `!!js` count
// the host evaluates as written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { readFile } from 'node:fs/promises';
import { auditRecords, makeHome, PRIMARY, PRIMARY_PRO, ROOT, runHeadless, SECONDARY } from './harness.mjs';

const DARUMA_ROW = `
- id: dsh-daruma
  config:
    channels:
      - { provider: ${PRIMARY.provider}, model: ${PRIMARY.model} }
      - { provider: ${SECONDARY.provider}, model: ${SECONDARY.model} }
    failureBudget: 3
    cooldownMs: 30000
    giveUpBudget: 8
    stateFile: ~/.dsh/daruma/channel-health.json
`;

/**
 * A model-failover row (its config lines) run through the installed migrate
 * CLI, and the printed row pasted into the home's patch file; the CLI's text.
 * A host never booted yet: the YAML reader is found through the host install.
 */
async function migrateInstalled(home, configLines) {
  const old = join(home.dir, 'model-failover.patch.yml');
  await writeFile(old, ['- id: model-failover', '  config:', ...configLines, ''].join('\n'));
  const cli = join(home.dsh, 'profiles', 'headless', 'node_modules', 'dsh-resilience', 'bin', 'dsh-resilience.js');
  const { stdout } = await promisify(execFile)(process.execPath, [cli, 'migrate', old], { env: home.env({ DSH_HOST_DIR: process.env.DSH_HOST_DIR }) });
  await writeFile(join(home.dsh, 'cordis.patch.yml'), `${stdout.split('\n\n')[0]}\n`);
  return stdout;
}

describe('migrating from the replaced plugins', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  test('its row, migrated and installed as printed, fails over to the backup', async (t) => {
    // A stand-in row under daruma's name, as the host of a daruma user loads it, and the
    // command runner to type `/resilience migrate` in that host.
    const home = await makeHome({
      baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock',
      extraPlugins: [{ dir: join(ROOT, 'e2e/fixtures/fake-daruma'), id: 'dsh-daruma' },
        { dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config: { commands: ['/resilience migrate'] } }],
    });
    t.after(home.cleanup);
    // The row where a daruma user has it: the home's patch layer. One ordinary run first, as
    // any install has had (the host links its packages, js-yaml among them, on its first boot).
    await writeFile(join(home.dsh, 'cordis.patch.yml'), DARUMA_ROW);
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'hello' }]);
    assert.equal((await runHeadless(home, 'Say hello')).code, 0);

    // The CLI as `dsh plugin add` installed it, run with the host's node, reading what the
    // host composes for the profile (no file named).
    const cli = join(home.dsh, 'profiles', 'headless', 'node_modules', 'dsh-resilience', 'bin', 'dsh-resilience.js');
    const { stdout, stderr } = await promisify(execFile)(process.execPath, [cli, 'migrate', '--profile', 'headless'], { env: home.env() });
    assert.doesNotMatch(stderr, /refuses|not checked/, 'the installed CLI checked the row against the module');
    const patch = stdout.split('\n\n')[0];
    assert.match(patch, /- id: resilience\n {2}config:\n {4}chain:/);
    assert.match(patch, /- id: dsh-daruma\n {2}disabled: true/);
    assert.match(stdout, /dsh-daruma +stateFile .*\(none\)/, 'the key with no equivalent is in the table');
    // `/resilience migrate` in that host printed the same, from the rows it loaded.
    const [ran] = (await readFile(join(home.dsh, 'command-runner/results.jsonl'), 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l));
    assert.equal(ran.result.result.kind, 'success', JSON.stringify(ran));
    assert.equal(ran.result.result.text, `From the rows this host loaded:\n\n${stdout.trimEnd()}`);

    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the backup' }]);
    // Pasted as printed, in place of the daruma row.
    await writeFile(join(home.dsh, 'cordis.patch.yml'), `${patch}\n`);
    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the backup', r.stderr);
    assert.equal(r.code, 0);
    // failureBudget 3 became failureThreshold 3, but the request itself moves sooner: its
    // second failure spills it to the backup (spillAfter 2, which daruma did not have).
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const audit = await auditRecords(home);
    const boot = audit.filter((a) => a.type === 'boot').at(-1);
    assert.deepEqual(boot.chain, [PRIMARY, SECONDARY], 'the pasted row is the one running');
    const moved = audit.find((a) => a.type === 'spill');
    assert.deepEqual([moved.from, moved.to], [PRIMARY, SECONDARY]);
  });

  test('dsh-model-failover: fallbacks alone as the chain; the session\'s own model is still tried first', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the fallback' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock' });
    t.after(home.cleanup);
    const stdout = await migrateInstalled(home, [
      `    fallbacks: [{ provider: ${SECONDARY.provider}, model: ${SECONDARY.model} }]`,
      '    modelCircuitThreshold: 2',
      '    burstWindowMs: 300000',
      '    platformCooldownMs: 120000',
    ]);
    assert.match(stdout, /dsh-model-failover +platformCooldownMs +120000 +providerCooldownMs +120000/);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the fallback', r.stderr);
    assert.equal(r.code, 0);
    // modelCircuitThreshold 2 became failureThreshold 2: the second 429 fails over.
    assert.deepEqual(fp.counts(), { [PRIMARY.model]: 2, [SECONDARY.model]: 1 });
    const failover = (await auditRecords(home)).find((a) => a.type === 'failover');
    assert.deepEqual([failover.from, failover.to], [PRIMARY, SECONDARY]);
  });

  test('dsh-model-failover: its model circuit, then its platform circuit, after migrate', async (t) => {
    // Its headline: a model that keeps failing opens its model circuit and the
    // next fallback of the same platform is tried; a second model of that
    // platform failing opens the platform circuit, and the request leaves the
    // platform for the fallback elsewhere.
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(PRIMARY_PRO.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the other platform' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock' });
    t.after(home.cleanup);
    const stdout = await migrateInstalled(home, [
      '    fallbacks:',
      `      - { provider: ${PRIMARY_PRO.provider}, model: ${PRIMARY_PRO.model} }`,
      `      - { provider: ${SECONDARY.provider}, model: ${SECONDARY.model} }`,
      '    modelCircuitThreshold: 2',
      '    platformCircuitThreshold: 2',
    ]);
    assert.match(stdout, /dsh-model-failover +platformCircuitThreshold +2 +providerThreshold +2/);

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.stdout.trim(), 'answer from the other platform', r.stderr);
    assert.equal(r.code, 0);
    const audit = await auditRecords(home);
    const opened = audit.filter((a) => a.type === 'circuit-open').map((a) => `${a.channel.provider}/${a.channel.model}`);
    // The model circuit first, then the platform's (model "*"), and never the other platform.
    assert.equal(opened[0], `${PRIMARY.provider}/${PRIMARY.model}`, JSON.stringify(opened));
    assert.ok(opened.includes(`${PRIMARY.provider}/*`), `the platform circuit opened: ${JSON.stringify(opened)}`);
    assert.ok(opened.indexOf(`${PRIMARY.provider}/*`) > 0, 'after a model circuit');
    assert.ok(!opened.some((c) => c.startsWith(`${SECONDARY.provider}/`)));
    assert.equal(fp.counts()[SECONDARY.model], 1);
    const last = audit.filter((a) => a.type === 'failover').at(-1);
    assert.deepEqual(last.to, SECONDARY, 'the request left the platform');
  });

  test('dsh-plugin-tool-retry: its allow-listed tool, migrated, is repeated until it answers', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'tool_call', name: 'flaky_lookup', arguments: { query: 'q' } }, { kind: 'success', text: 'done' }]);
    const home = await makeHome({
      baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock',
      extraPlugins: [{ dir: join(ROOT, 'e2e/fixtures/flaky-tools'), id: 'flaky-tools',
        config: { tools: [{ name: 'flaky_lookup', script: [{ kind: 'reset' }, { kind: 'reset' }, { kind: 'ok', answer: 'found' }] }] } }],
    });
    t.after(home.cleanup);
    const old = join(home.dir, 'tool-retry.patch.yml');
    await writeFile(old, "- id: tool-retry\n  config:\n    retryTools: ['flaky_*']\n    backoffMs: 100\n    maxBackoffMs: 400\n");
    const cli = join(home.dsh, 'profiles', 'headless', 'node_modules', 'dsh-resilience', 'bin', 'dsh-resilience.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'migrate', old], { env: home.env({ DSH_HOST_DIR: process.env.DSH_HOST_DIR }) });
    await writeFile(join(home.dsh, 'cordis.patch.yml'), `${stdout.split('\n\n')[0]}\n`);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal(r.code, 0);
    const tool = fp.requests[1].body.messages.find((m) => m.role === 'tool');
    assert.equal(tool.content, 'flaky_lookup answered: found (call 3)', 'the model got the third attempt\'s answer');
    const audit = (await auditRecords(home)).filter((a) => a.type.startsWith('tool-'));
    assert.deepEqual(audit.map((a) => [a.type, a.attempt]), [['tool-retry', 1], ['tool-retry', 2], ['tool-recovered', 3]]);
  });

  test('a !!js expression with a " #", a "?", a ":" and line breaks, migrated, is the one the host evaluates', async (t) => {
    // Printed plain, ` #` started a comment and the line breaks wrote YAML of their own.
    // 4 attempts, not the default 3: the fourth call is the one that answers.
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'tool_call', name: 'flaky_lookup', arguments: { query: 'q' } }, { kind: 'success', text: 'done' }]);
    const home = await makeHome({
      baseURL: fp.baseURL, plugin: {}, primaryRetry: 'stock', secondaryRetry: 'stock',
      extraPlugins: [{ dir: join(ROOT, 'e2e/fixtures/flaky-tools'), id: 'flaky-tools',
        config: { tools: [{ name: 'flaky_lookup', script: [{ kind: 'reset' }, { kind: 'reset' }, { kind: 'reset' }, { kind: 'ok', answer: 'found' }] }] } }],
    });
    t.after(home.cleanup);
    const expr = "' #'\n  ? 4 // a # in a string picks 4\n  : 1";
    const old = join(home.dir, 'tool-retry.patch.yml');
    await writeFile(old, `- id: tool-retry\n  config:\n    retryTools: ['flaky_*']\n    backoffMs: 100\n    maxAttempts: !!js ${JSON.stringify(expr)}\n`);
    const cli = join(home.dsh, 'profiles', 'headless', 'node_modules', 'dsh-resilience', 'bin', 'dsh-resilience.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'migrate', old], { env: home.env({ DSH_HOST_DIR: process.env.DSH_HOST_DIR }) });
    const patch = stdout.split('\n\n')[0];
    assert.ok(patch.includes(`maxAttempts: !!js ${JSON.stringify(expr)}`), patch);
    await writeFile(join(home.dsh, 'cordis.patch.yml'), `${patch}\n`);

    const r = await runHeadless(home, 'Look it up');

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal(r.code, 0);
    const tool = fp.requests[1].body.messages.find((m) => m.role === 'tool');
    assert.equal(tool.content, 'flaky_lookup answered: found (call 4)', 'the host evaluated the expression to 4 attempts');
  });
});
