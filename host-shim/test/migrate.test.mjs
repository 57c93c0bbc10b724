// Golden tests of `dsh-resilience migrate`: each replaced plugin's example
// row in, the expected row, table and printout out, and the row accepted by
// the module. UPDATE_GOLDEN=1 rewrites the expected files (review the diff).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, writeFile } from 'node:fs/promises';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { migrate } from '../migrate.js';
import { parsePatch, readPatchFiles, renderMigration, rowsFromPatches } from '../migrate-text.js';
import { migrateText } from '../command.js';
import { parseCommandLine } from '../command-line.js';
import { splitConfig } from '../row.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { checkRow } from '../migrate-check.js';

const FIXTURES = ['daruma', 'reconnect', 'quota-retry', 'tool-retry', 'model-failover'];
const fixture = (name, ext) => fileURLToPath(new URL(`./fixtures/migrate/${name}.${ext}`, import.meta.url));
const CLI = fileURLToPath(new URL('../../bin/dsh-resilience.js', import.meta.url));
const quiet = { warn() {} };
let compiled;
before(async () => { compiled = await compileModule(); });

const rowsOf = (yaml) => parsePatch(yaml).then((list) => rowsFromPatches([list]));

for (const name of FIXTURES) {
  test(`${name}: the documented row migrates to the expected row and table, and the module takes it`, async () => {
    const result = await migrate(await readPatchFiles([fixture(name, 'patch.yml')]));
    const text = `${renderMigration(result)}\n`;
    if (process.env.UPDATE_GOLDEN) {
      await writeFile(fixture(name, 'expected.json'), `${JSON.stringify({ row: result.row, table: result.table }, null, 2)}\n`);
      await writeFile(fixture(name, 'expected.txt'), text);
    }
    assert.deepEqual(result.errors, []);
    const expected = JSON.parse(await readFile(fixture(name, 'expected.json'), 'utf8'));
    // Through JSON, as stored: a line with no new key has no new value.
    assert.deepEqual(JSON.parse(JSON.stringify({ row: result.row, table: result.table })), expected);
    assert.equal(text, await readFile(fixture(name, 'expected.txt'), 'utf8'));

    // Never silently dropped: every key of the old row has its line.
    const [old] = await readPatchFiles([fixture(name, 'patch.yml')]);
    for (const key of Object.keys(old.config)) assert.ok(result.table.some((t) => t.key === key), `${name}.${key} is in the table`);

    const policy = new Policy(compiled, splitConfig(result.row).policy, quiet); // the module never sees the shim's keys
    if (result.row.chain) assert.deepEqual(policy.resolved.chain, result.row.chain);
  });
}

test('the CLI prints the same text and exits 0; contradictory rows exit 1 with both keys named', async () => {
  const run = promisify(execFile);
  const ok = await run(process.execPath, [CLI, 'migrate', fixture('daruma', 'patch.yml')]);
  assert.equal(ok.stdout, await readFile(fixture('daruma', 'expected.txt'), 'utf8'));
  const both = await run(process.execPath, [CLI, 'migrate', fixture('daruma', 'patch.yml'), fixture('model-failover', 'patch.yml')])
    .then(() => assert.fail('exit 0'), (e) => e);
  assert.equal(both.code, 1);
  assert.match(both.stdout, /dsh-model-failover key "fallbacks" sets chain .* but dsh-daruma key "channels" sets it/);
  assert.doesNotMatch(both.stdout, /- id: resilience/, 'no row is printed for contradictory input');
  const usage = await run(process.execPath, [CLI, 'frobnicate']).then(() => assert.fail('exit 0'), (e) => e);
  assert.equal(usage.code, 2);
});

test('all five rows at once: each contradiction is refused naming both keys; agreeing keys pass', async () => {
  const result = await migrate(await readPatchFiles(FIXTURES.map((n) => fixture(n, 'patch.yml'))));
  const pairs = result.errors.map((e) => [...e.matchAll(/(dsh-[\w-]+) key "(\w+)"/g)].map((m) => `${m[1]}.${m[2]}`));
  assert.deepEqual(pairs, [
    ['dsh-model-failover.fallbacks', 'dsh-daruma.channels'],
    ['dsh-model-failover.modelCircuitThreshold', 'dsh-daruma.failureBudget'],
    ['dsh-model-failover.modelCooldownMs', 'dsh-daruma.cooldownMs'],
  ]);
  const agreeing = await migrate(await readPatchFiles(['reconnect', 'quota-retry', 'tool-retry'].map((n) => fixture(n, 'patch.yml'))));
  assert.deepEqual(agreeing.errors, []);
  new Policy(compiled, agreeing.row, quiet); // eslint-disable-line no-new
});

test('our own row merges in: a key it shares with an old row must agree', async () => {
  const rows = await rowsOf(`
- insert:
    - { id: resilience, name: dsh-resilience, config: { chain: [{ provider: p, model: a }], tools: { maxAttempts: 2 } } }
- id: tool-retry
  config: { retryTools: [web_fetch], maxAttempts: 5 }
`);
  const result = await migrate(rows);
  assert.deepEqual(result.errors, ['dsh-plugin-tool-retry key "maxAttempts" sets tools.maxAttempts to 5, but dsh-resilience key "tools" sets it to 2: keep one of them']);

  // The shim's own keys ride along, and the module check leaves them to the shim, as activation does.
  const shimKeys = await migrate(await rowsOf(`
- id: resilience
  config: { stateDir: state, healthRefreshMs: 2000, notify: [] }
- id: dsh-daruma
  config: { channels: [{ provider: p, model: a }] }
`));
  assert.deepEqual(shimKeys.errors, []);
  assert.deepEqual(shimKeys.row, { stateDir: 'state', healthRefreshMs: 2000, notify: [], chain: [{ provider: 'p', model: 'a' }] });
  assert.deepEqual(await checkRow(shimKeys.row), { ok: true });
});

test('unknown keys, disabled rows and shapes the module would refuse are named, never dropped', async () => {
  const result = await migrate(await rowsOf(`
- id: dsh-daruma
  config: { channels: [{ provider: p, model: a }], tripOnRetryExhausted: true }
- id: dsh-reconnect
  disabled: true
  config: { maxDelayMs: 5000 }
`));
  assert.deepEqual(result.errors, []);
  assert.match(result.table.find((t) => t.key === 'tripOnRetryExhausted').note, /not a key dsh-daruma documents/);
  assert.match(result.table.find((t) => t.plugin === 'dsh-reconnect').note, /disabled: nothing of it is migrated/);
  assert.equal(result.row.backoffMaxMs, undefined);

  const bad = await migrate(await rowsOf(`
- id: tool-retry
  config: { retryTools: ['*'] }
- id: llm-quota-retry
  config: { pools: { main: [{ provider: p, model: a, weight: 2 }] }, balances: [{ provider: p, script: "curl -s $URL | jq .x" }] }
`));
  assert.deepEqual(bad.errors.map((e) => e.replace(/:.*/, '')), [
    'dsh-plugin-tool-retry key "retryTools"', 'dsh-llm-quota-retry key "pools"', 'dsh-llm-quota-retry key "balances"']);
  assert.match(bad.errors[1], /main\[0\]\.weight: no equivalent/);
  const fraction = await migrate(await rowsOf('- { id: dsh-daruma, config: { failureBudget: 2.5 } }'));
  assert.deepEqual(fraction.errors, ['dsh-daruma key "failureBudget": must be a whole number, not 2.5']);
  assert.match(bad.errors[2], /argv/);
});

test('values our bounds would refuse become the nearest accepted ones, in the table', async () => {
  const result = await migrate(await rowsOf(`
- id: model-failover
  config: { fallbacks: [{ provider: p, model: b }], modelCooldownMs: 3600000, tripCodes: [RATE_LIMIT, SERVER, INVALID_CREDENTIAL] }
- id: dsh-reconnect
  config: { maxDelayMs: 500, retryQuota: true }
- id: tool-retry
  config: { retryTools: [web_fetch], backoffMs: 0, retryDeadlineMs: 0 }
`));
  assert.deepEqual(result.errors, []);
  assert.equal(result.row.maxCooldownMs, 3_600_000);
  assert.equal(result.row.backoffBaseMs, 500);
  assert.deepEqual(result.row.quota, { defaultEnabled: true });
  assert.deepEqual(result.row.tools, { retry: ['web_fetch'], backoffMs: 1, retryDeadlineMs: 86_400_000 });
  assert.deepEqual(result.row.classes, [
    { code: 'INVALID_CREDENTIAL', class: 'transient' }, { code: 'TIMEOUT', class: 'permanent' },
    { code: 'TRANSPORT', class: 'permanent' }, { code: 'QUOTA', class: 'permanent' }, { code: 'EMPTY_RESPONSE', class: 'permanent' }]);
  const policy = new Policy(compiled, result.row, quiet);
  assert.equal(policy.resolved.quota.defaultEnabled, true);
});

test('a !!js value is carried over as written, for the host to evaluate', async () => {
  const result = await migrate(await rowsOf(`
- id: dsh-daruma
  config: { cooldownMs: !!js "Number(process.env.COOLDOWN)" }
`));
  assert.deepEqual(result.row, { cooldownMs: { __jsExpr: 'Number(process.env.COOLDOWN)' } });
  assert.match(renderMigration(result), /cooldownMs: !!js "Number\(process.env.COOLDOWN\)"/);
});

test('/resilience migrate reads the rows the host loaded', async () => {
  assert.deepEqual(parseCommandLine('resilience', '/resilience migrate'), { kind: 'migrate' });
  const [row] = await readPatchFiles([fixture('daruma', 'patch.yml')]);
  const ctx = { loader: { entries: () => [{ options: { ...row, name: 'dsh-daruma' } }, { options: { id: 'resilience', name: 'dsh-resilience', config: {} } }] } };
  const out = await migrateText(ctx, '/nonexistent/cordis.patch.yml');
  assert.equal(out.ok, true);
  assert.match(out.text, /^From the rows this host loaded:/);
  assert.ok(out.text.includes((await readFile(fixture('daruma', 'expected.txt'), 'utf8')).split('\n\n')[0]));
});

test('keys named like Object.prototype members are ordinary keys: listed, not migrated, and nothing is polluted', async () => {
  // As the host's YAML reader gives them: js-yaml defines `__proto__` as an own key.
  const rows = await rowsOf(`
- id: resilience
  config:
    __proto__: !!js "globalThis.polluted = 1"
- id: dsh-daruma
  config:
    channels: [{ provider: p, model: a }]
    __proto__: { __jsExpr: "x" }
    constructor: 1
    toString: x
    isPrototypeOf: true
    hasOwnProperty: [1]
    valueOf: { a: 1 }
`);
  assert.ok(Object.hasOwn(rows[0].config, '__proto__'), 'the reader kept __proto__ as a key');
  const result = await migrate(rows);
  assert.equal(/** @type {any} */ ({}).__jsExpr, undefined, 'Object.prototype is untouched');
  assert.equal(Object.getPrototypeOf(result.row), Object.prototype);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.row.chain, [{ provider: 'p', model: 'a' }], 'the chain is kept');
  for (const key of ['__proto__', 'constructor', 'toString', 'isPrototypeOf', 'hasOwnProperty', 'valueOf']) {
    const line = result.table.find((t) => t.plugin === 'dsh-daruma' && t.key === key);
    assert.ok(line, `${key} is in the table`);
    assert.equal(line.to, null);
    assert.match(line.note, /not a key dsh-daruma documents: not migrated/);
  }
  // Our own row's __proto__ is a key of the printed row (the module names it when the row loads).
  assert.ok(Object.hasOwn(result.row, '__proto__'));
  assert.match(renderMigration(result), /__proto__: !!js "globalThis.polluted = 1"/);
  assert.equal(/** @type {any} */ ({}).__jsExpr, undefined);
});

test('a balance script\'s secret written into env is named in the table, not quoted', async () => {
  const result = await migrate(await rowsOf(`
- id: llm-quota-retry
  config:
    balances:
      - provider: p
        script: [node, balance.mjs]
        env: { REGION: eu-west-1, OPENAI_API_KEY: sk-proj-Ab3dEf6hIj9kLm2nOp5q }
`));
  assert.deepEqual(result.errors, []);
  assert.deepEqual(/** @type {any} */ (result.row.quota).balances[0].env,
    [{ name: 'REGION', value: 'eu-west-1' }, { name: 'OPENAI_API_KEY', value: 'sk-proj-Ab3dEf6hIj9kLm2nOp5q' }]);
  const warnings = result.table.filter((t) => t.note.startsWith('warning:'));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0].note, /\[0\]\.env OPENAI_API_KEY looks like a secret .* !!js process\.env\.OPENAI_API_KEY/);
  assert.doesNotMatch(warnings[0].note, /sk-proj/);
  const [patch, table] = renderMigration(result).split('\n\n');
  assert.match(table, /warning: \[0\]\.env OPENAI_API_KEY/);
  // Said where it is copied too: the patch's head, as a comment, pointing at a credential reference.
  assert.match(patch, /^# warning: \[0\]\.env OPENAI_API_KEY looks like a secret written into the row: move it to a credential reference: .*name it in apiKeyEnv; else .* !!js process\.env\.OPENAI_API_KEY$/m);
  assert.doesNotMatch(patch.split('\n').filter((l) => l.startsWith('#')).join('\n'), /sk-proj/, 'the comment never quotes the secret');
});
