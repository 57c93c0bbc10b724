// migrate's YAML doors: what it prints is read back by the host's own patch
// reader as the same rows (a `!!js` expression exactly as written, no row
// more), and what it reads is bounded (an alias bomb or an alias that holds
// itself is refused with the file and the reason, never a stack).
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../migrate.js';
import { parsePatch, renderMigration, rowsFromPatches } from '../migrate-text.js';
import { MAX_ALIASED_VALUES } from '../migrate-aliases.js';
import { migrateText } from '../command.js';
import { compileModule } from '../engine.js';

const CLI = fileURLToPath(new URL('../../bin/dsh-resilience.js', import.meta.url));
const run = promisify(execFile);
let compiled;
let dir;
before(async () => {
  compiled = await compileModule();
  dir = await mkdtemp(join(tmpdir(), 'migrate-yaml-'));
});

// The host's reader of a cordis.patch.yml (dsh-app-boot's, the one boot uses).
async function hostPatchReader() {
  const host = process.env.DSH_HOST_DIR;
  if (!host) return undefined;
  const boot = createRequire(join(host, 'host', 'package.json')).resolve('@deepseek-ai/dsh-app-boot');
  const { loadOverlayPatches } = await import(boot);
  return (/** @type {string} */ file) => loadOverlayPatches('test', file);
}

/** The printout's two parts: the patch to paste, the table. */
const parts = (text) => {
  const at = text.indexOf('\n\n');
  return [text.slice(0, at), text.slice(at + 2)];
};

// Each breaks a plain scalar after `!!js` in its own way.
const EXPRESSIONS = {
  comment: 'x # c',
  conditional: 'a ? 1000 : 30000',
  'key-like': 'a: b',
  'multi-line': 'Number(\n  process.env.COOLDOWN\n) * 1000',
  'a new row': '1\n- id: evil\n  disabled: true',
  'a blank line': 'a\n\nb',
  quotes: `"double" + 'single' + \`tick\``,
  backslashes: 'String.raw`C:\\dir\\n` + "\\\\"',
  'leading and trailing spaces': '  1000  ',
  'tab and CRLF': '\t1 +\r\n2',
  unicode: "'日本語' + 'é' + '😀'.length",
  'unicode line breaks and controls': 'a\u2028b\u2029c\u0085d\u007fe\u009ff\ufefff\u0007',
  'YAML indicators first': '- [1, {a: *b}] & !c % @d `e` | > ---',
  'document end': '...\n---\n...',
  'a bare word': 'Infinity',
  'looks like null': 'null',
  empty: '',
};

for (const [name, expr] of Object.entries(EXPRESSIONS)) {
  test(`!!js with ${name}: the host's patch reader gives back the same expression and the same rows`, async (t) => {
    const read = await hostPatchReader();
    if (!read) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
    const js = { __jsExpr: expr };
    const rows = [
      { id: 'dsh-daruma', config: { channels: [{ provider: 'p', model: 'a' }], cooldownMs: js } },
      // Our own row carries any value as written: an expression in a list, in a flat map, deep.
      { id: 'resilience', config: { listed: [js, 1], flat: { a: js, b: 'x' }, deep: { in: { e: js } } } },
    ];
    const result = await migrate(rows, compiled);
    assert.deepEqual(result.errors, []);
    assert.deepEqual(result.row.cooldownMs, js, 'the module carried it over as written');
    const [patch, table] = parts(renderMigration(result));
    const file = join(dir, `${name.replaceAll(' ', '-')}.yml`);
    await writeFile(file, `${patch}\n`);
    const patches = read(file);
    assert.equal(patches.length, 2, `no row more than ours and the old one turned off:\n${patch}`);
    assert.deepEqual(patches[0], { id: 'resilience', config: result.row });
    assert.deepEqual(patches[1], { id: 'dsh-daruma', disabled: true });
    assert.deepEqual(rowsFromPatches([await parsePatch(`${patch}\n`)])[0].config, result.row, 'migrate reads its own printout the same');
    assert.equal(table.split('\n').length, result.table.length + 1, 'one table line per line of the table, the header first');
  });
}

/** A billion laughs: `levels` lists of ten aliases to the list before. */
const bomb = (levels) => {
  const lines = ['- id: dsh-daruma', '  config:', '    l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]'];
  for (let i = 1; i <= levels; i++) lines.push(`    l${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(', ')}]`);
  return `${lines.join('\n')}\n`;
};

test('an alias bomb is refused naming the file and the reason; the CLI says it in one line, exits 2, no stack', async () => {
  const text = bomb(9); // about 700 bytes, ten billion values when expanded
  assert.ok(text.length < 800);
  await assert.rejects(parsePatch(text, 'laughs.yml'),
    { message: `laughs.yml: its aliases repeat more than ${MAX_ALIASED_VALUES} values (nested aliases, a "billion laughs"?): refused; write the values out` });
  const file = join(dir, 'laughs.yml');
  await writeFile(file, text);
  const out = await run(process.execPath, [CLI, 'migrate', file]).then(() => assert.fail('exit 0'), (e) => e);
  assert.equal(out.code, 2);
  assert.equal(out.stdout, '');
  assert.equal(out.stderr, `dsh-resilience migrate: ${file}: its aliases repeat more than ${MAX_ALIASED_VALUES} values (nested aliases, a "billion laughs"?): refused; write the values out\n`);
});

test('an alias inside its own anchor is refused, not walked forever', async () => {
  await assert.rejects(parsePatch('- id: dsh-daruma\n  config: &a { channels: [*a] }\n', 'self.yml'),
    { message: 'self.yml: an alias inside the value its anchor names makes a value that holds itself: refused' });
});

test('anchors a patch really uses (one chain twice) still migrate', async () => {
  const rows = rowsFromPatches([await parsePatch(`
- id: dsh-daruma
  config: { channels: &chain [{ provider: p, model: a }, { provider: p, model: b }] }
- id: model-failover
  config: { fallbacks: *chain }
`)]);
  const result = await migrate(rows, compiled);
  assert.deepEqual(result.errors, []);
  assert.deepEqual(result.row.chain, [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }]);
});

test('/resilience migrate: the loaded rows print the same way, and a refused input is an error with its reason', async (t) => {
  const read = await hostPatchReader();
  if (!read) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const expr = EXPRESSIONS['a new row'];
  const loaded = { loader: { entries: () => [{ options: { id: 'dsh-daruma', name: 'dsh-daruma', config: { cooldownMs: { __jsExpr: expr } } } }] } };
  const out = await migrateText(loaded, join(dir, 'none.yml'));
  assert.equal(out.ok, true);
  const [patch] = parts(out.text.replace(/^From the rows this host loaded:\n\n/, ''));
  const file = join(dir, 'in-host.yml');
  await writeFile(file, `${patch}\n`);
  assert.deepEqual(read(file), [{ id: 'resilience', config: { cooldownMs: { __jsExpr: expr } } }, { id: 'dsh-daruma', disabled: true }]);

  // Where the host exposes no rows, the home's file is read: a bomb there is named, not "nothing to migrate".
  const home = join(dir, 'home-laughs.yml');
  await writeFile(home, bomb(9));
  const refused = await migrateText({}, home);
  assert.equal(refused.ok, false);
  assert.equal(refused.text, `dsh-resilience migrate: ${home}: its aliases repeat more than ${MAX_ALIASED_VALUES} values (nested aliases, a "billion laughs"?): refused; write the values out`);

  // Rows that hold themselves (the loader's own values) are refused the same way.
  const config = { channels: [] };
  config.channels.push(config);
  const cyclic = await migrateText({ loader: { entries: () => [{ options: { id: 'dsh-daruma', config } }] } }, home);
  assert.equal(cyclic.ok, false);
  assert.match(cyclic.text, /^dsh-resilience migrate: the rows read: an alias inside the value its anchor names makes a value that holds itself: refused$/);
});

test('a secret\'s warning heads the patch as a comment, and a line break in the key\'s name cannot end it', async (t) => {
  const read = await hostPatchReader();
  if (!read) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const name = 'A_TOKEN\n- id: evil\n  disabled: true\u2028#';
  const rows = [{ id: 'llm-quota-retry', config: { balances: [{ provider: 'p', script: ['node', 'b.mjs'], env: { [name]: 'hunter2' } }] } }];
  const result = await migrate(rows, compiled);
  const [patch] = parts(renderMigration(result));
  const comments = patch.split('\n').filter((l) => l.startsWith('# warning:'));
  assert.equal(comments.length, 1, patch);
  assert.match(comments[0], /^# warning: \[0\]\.env A_TOKEN\\u000a- id: evil\\u000a {2}disabled: true\\u2028# looks like a secret .*credential reference/);
  const file = join(dir, 'secret.yml');
  await writeFile(file, `${patch}\n`);
  const patches = read(file);
  assert.deepEqual(patches.map((p) => p.id), ['resilience', 'llm-quota-retry'], 'no row more');
  assert.deepEqual(patches[0].config, result.row);
});
