// The shim's shape, as issue #33 set it: index.js is construction in order
// and the host's registrations (at most 200 lines), and no file of the shim
// imports itself back through others (a circle made start-up order a matter
// of luck: compat-events.js -> effects.js -> effect-events.js once did).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const DIR = fileURLToPath(new URL('..', import.meta.url));
const files = readdirSync(DIR).filter((f) => f.endsWith('.js'));
const source = (f) => readFileSync(`${DIR}/${f}`, 'utf8');

test('index.js stays at most 200 lines', () => {
  const lines = source('index.js').split('\n').length - 1;
  assert.ok(lines <= 200, `index.js has ${lines} lines`);
});

test('no import circles among the shim\'s files, static or dynamic', () => {
  /** @type {Map<string, string[]>} */
  const imports = new Map();
  for (const f of files) {
    const text = source(f);
    const found = [
      ...[...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+'\.\/([\w.-]+\.js)'/g)].map((m) => m[1]),
      ...[...text.matchAll(/import\('\.\/([\w.-]+\.js)'\)/g)].map((m) => m[1]),
    ];
    imports.set(f, [...new Set(found)]);
  }
  const circles = [];
  const done = new Set();
  const path = [];
  const walk = (f) => {
    if (path.includes(f)) return circles.push([...path.slice(path.indexOf(f)), f].join(' -> '));
    if (done.has(f)) return undefined;
    path.push(f);
    for (const g of imports.get(f) ?? []) walk(g);
    path.pop();
    done.add(f);
    return undefined;
  };
  for (const f of files) walk(f);
  assert.ok(imports.get('index.js')?.length > 5, 'the imports were read');
  assert.deepEqual(circles, []);
});
