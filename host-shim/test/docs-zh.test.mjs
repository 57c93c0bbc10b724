// The Chinese README and migration pages are translations kept by hand. These
// tests make the drift a failure instead of a silent lie: a key or command
// added to README.md, or a migration page added, must reach the Chinese side.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir } from 'node:fs/promises';

const ROOT = new URL('../../', import.meta.url);
const read = (p) => readFile(new URL(p, ROOT), 'utf8');

/** The backticked names in the first column of the table in the "## " section whose title matches `heading`. */
function firstColumn(md, heading) {
  const section = md.split(/^## /m).find((s) => heading.test(s.split('\n')[0]));
  assert.ok(section, `a "## " section matching ${heading}`);
  const names = [];
  for (const m of section.matchAll(/^\|\s*([^|]*?(?:\\\|[^|]*?)*)\s*\|/gm)) {
    for (const k of m[1].matchAll(/`([^`]+)`/g)) names.push(k[1]);
  }
  return names;
}

test('README.zh-CN.md lists the same config keys as README.md', async () => {
  const en = firstColumn(await read('README.md'), /^Keys$/);
  const zh = firstColumn(await read('README.zh-CN.md'), /^主要配置项$/);
  assert.ok(en.length >= 20, `README.md keys table found (${en.length} keys)`);
  assert.deepEqual(zh, en);
});

test('README.zh-CN.md lists the same commands as README.md', async () => {
  const en = firstColumn(await read('README.md'), /^Commands$/);
  const zh = firstColumn(await read('README.zh-CN.md'), /^命令$/);
  assert.ok(en.length >= 8, `README.md commands table found (${en.length} commands)`);
  assert.deepEqual(zh, en);
});

test('README.md and README.zh-CN.md link to each other', async () => {
  assert.match(await read('README.md'), /\]\(README\.zh-CN\.md\)/);
  assert.match(await read('README.zh-CN.md'), /\]\(README\.md\)/);
});

test('every docs/migrating page has a docs/zh-CN/migrating translation, and no more', async () => {
  const md = (d) => readdir(new URL(d, ROOT)).then((fs) => fs.filter((f) => f.endsWith('.md')).sort());
  const en = await md('docs/migrating/');
  const zh = await md('docs/zh-CN/migrating/');
  assert.ok(en.length >= 6, `docs/migrating pages found (${en.length})`);
  assert.deepEqual(zh, en);
  // Each translation links back to its English page, so a reader can check it.
  for (const f of zh) {
    assert.match(await read(`docs/zh-CN/migrating/${f}`), new RegExp(`\\]\\(\\.\\./\\.\\./migrating/${f.replace('.', '\\.')}\\)`), f);
  }
});

test('every relative link in the Chinese docs points at a file that exists', async () => {
  const pages = ['README.zh-CN.md', ...(await readdir(new URL('docs/zh-CN/migrating/', ROOT))).map((f) => `docs/zh-CN/migrating/${f}`)];
  for (const p of pages) {
    for (const m of (await read(p)).matchAll(/\]\(([^)#:]+)(#[^)]*)?\)/g)) {
      const target = new URL(m[1], new URL(p, ROOT));
      await assert.doesNotReject(readFile(target).catch(() => readdir(target)), `${p} links to ${m[1]}`);
    }
  }
});
