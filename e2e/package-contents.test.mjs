// What an installed package can show: the README is the package's front page
// (the registry renders it, and it is what a user reads in node_modules), so
// every relative link and image it makes must be in the tarball, and so must
// every link of the pages it leads to. Asked of npm itself (`npm pack
// --dry-run --json`, the file list `make pack` would write), not of the
// `files` globs: the globs are what broke this before.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The paths `npm pack` puts in the tarball, relative to the package root. */
async function packed() {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts', '--loglevel=error'],
    { cwd: ROOT, maxBuffer: 16 << 20 });
  return new Set(JSON.parse(stdout)[0].files.map((f) => f.path));
}

/**
 * The relative targets a Markdown page links to or shows: `[text](target)`,
 * `![alt](target)` and `<img src="target">`, without their #fragment; web
 * addresses and in-page anchors are left out.
 * @param {string} md
 */
function relativeTargets(md) {
  const out = new Set();
  const prose = md.replace(/^```[\s\S]*?^```/gm, ''); // a link in a code block is text
  for (const m of prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)|<img\b[^>]*\bsrc="([^"]+)"/g)) {
    const target = (m[1] ?? m[2]).split('#')[0];
    if (target === '' || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    out.add(decodeURI(target));
  }
  return [...out];
}

test('relativeTargets: links, images and <img>, not web addresses, anchors or code', () => {
  const md = [
    'See [a](docs/a.md#part), ![pic](docs/img/p.png "title") and <img src="docs/img/q.png" width="4">.',
    '[web](https://example.test/x) [anchor](#keys) [mail](mailto:x@y.test) [space](docs/my%20page.md)',
    '```', '[not a link](docs/in-code.md)', '```',
  ].join('\n');
  assert.deepEqual(relativeTargets(md).sort(), ['docs/a.md', 'docs/img/p.png', 'docs/img/q.png', 'docs/my page.md']);
});

test('every relative link and image of the READMEs, and of every page they lead to, is in the package', async () => {
  const files = await packed();
  for (const readme of ['README.md', 'README.zh-CN.md']) assert.ok(files.has(readme), `${readme} is packed`);
  const missing = [];
  // From the two READMEs, through every packed Markdown page reached.
  const queue = ['README.md', 'README.zh-CN.md'];
  const seen = new Set(queue);
  while (queue.length > 0) {
    const page = /** @type {string} */ (queue.shift());
    for (const target of relativeTargets(await readFile(join(ROOT, page), 'utf8'))) {
      const path = posix.normalize(posix.join(posix.dirname(page), target)).replace(/\/$/, '');
      const dir = `${path}/`;
      const there = files.has(path) || [...files].some((f) => f.startsWith(dir));
      if (!there) {
        missing.push(`${page} -> ${target}`);
        continue;
      }
      const md = files.has(path) ? path : files.has(`${dir}README.md`) ? `${dir}README.md` : undefined;
      if (md?.endsWith('.md') && !seen.has(md)) {
        seen.add(md);
        queue.push(md);
      }
    }
  }
  assert.deepEqual(missing, [], 'links to files the installed package does not have');
  assert.ok(seen.size > 10, `the READMEs lead to the docs (${seen.size} pages followed)`);
  assert.ok([...seen].some((p) => p.startsWith('docs/zh-CN/')), 'the Chinese pages were followed too');
});
