// Fuzzing migrate's YAML door, both ways, with a seeded generator: random
// text as `!!js` expressions, string values and keys is printed and read back
// by the host's own patch reader unchanged, with no row more; random graphs of
// anchors and aliases are refused exactly when their aliases repeat too many
// values (or hold themselves), and read otherwise.
// Each run is the same rounds from the same seed. To fuzz longer:
//   MIGRATE_FUZZ_SECONDS=60 MIGRATE_FUZZ_SEED=$RANDOM node --test host-shim/test/migrate-yaml-fuzz.test.mjs
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrate } from '../migrate.js';
import { parsePatch, renderMigration } from '../migrate-text.js';
import { MAX_ALIASED_VALUES } from '../migrate-aliases.js';
import { compileModule } from '../engine.js';

const SEED = Number(process.env.MIGRATE_FUZZ_SEED ?? 1);
const SECONDS = Number(process.env.MIGRATE_FUZZ_SECONDS ?? 0);
const ROUNDS = 150; // without MIGRATE_FUZZ_SECONDS

let compiled;
let dir;
before(async () => {
  compiled = await compileModule();
  dir = await mkdtemp(join(tmpdir(), 'migrate-fuzz-'));
});

/** mulberry32: a small seeded generator, so a failure names its seed and round. */
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n) => Math.floor(next() * n);
  const pick = (list) => list[int(list.length)];
  return { next, int, pick };
}

/** Rounds until the count or the time is up: the same rounds every run without SECONDS. */
function* rounds() {
  const until = Date.now() + SECONDS * 1000;
  for (let i = 0; SECONDS > 0 ? Date.now() < until : i < ROUNDS; i++) yield i;
}

// What a YAML writer gets wrong: indicators, breaks, controls, quotes,
// escapes, text past the BMP. No lone surrogate: the module's JSON reader
// makes it U+FFFD, as any UTF-8 reader must, so it cannot come back as written.
const POOLS = [
  ' !"#$%&\'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~',
  '-?:,[]{}#&*!|>\'"%@` \t\n\r',
  Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join(''),
  Array.from({ length: 33 }, (_, i) => String.fromCharCode(0x7f + i)).join(''),
  'é日本語\u2028\u2029\ufeff\ufffe\uffff\u00a0\u3000',
];
const ASTRAL = ['😀', '𝄞', '\u{10ffff}'];

function text(g, max = 40) {
  let s = '';
  for (let n = g.int(max + 1); n > 0; n--) {
    const r = g.next();
    if (r < 0.05) s += g.pick(ASTRAL);
    else if (r < 0.1) s += g.pick(['---', '...', ' #', ': ', '- ', '? ', '\n- id: evil\n', '\\n', '"', '  ']);
    else s += g.pick([...g.pick(POOLS)]);
  }
  return s;
}

async function hostPatchReader() {
  const host = process.env.DSH_HOST_DIR;
  if (!host) return undefined;
  const { loadOverlayPatches } = await import(createRequire(join(host, 'host', 'package.json')).resolve('@deepseek-ai/dsh-app-boot'));
  return (/** @type {string} */ file) => loadOverlayPatches('fuzz', file);
}

test(`fuzz (seed ${SEED}): random expressions, strings and keys come back from the host's reader as printed, and no row more`, async (t) => {
  const read = await hostPatchReader();
  if (!read) return t.skip('DSH_HOST_DIR unset (make test-shim sets it)');
  const g = generator(SEED);
  let n = 0;
  for (const round of rounds()) {
    const js = () => ({ __jsExpr: text(g) });
    const own = {
      expr: js(),
      str: text(g),
      [`x${text(g, 12)}`]: text(g), // a key of the user's text; x keeps it off our own keys
      list: [js(), text(g), 1],
      flat: { a: js(), [text(g, 8) || 'b']: text(g) },
      deep: { in: { e: js(), s: text(g) } },
    };
    const rows = [{ id: 'dsh-daruma', config: { cooldownMs: js() } }, { id: 'resilience', config: own }];
    const result = await migrate(rows, compiled);
    assert.deepEqual(result.errors, [], `seed ${SEED} round ${round}`);
    const printed = renderMigration(result);
    const patch = printed.slice(0, printed.indexOf('\n\n'));
    const file = join(dir, `round-${round % 8}.yml`);
    await writeFile(file, `${patch}\n`);
    let patches;
    try {
      patches = read(file);
    } catch (e) {
      assert.fail(`seed ${SEED} round ${round}: the host's reader refused the printout: ${e.message}\n${JSON.stringify(rows)}`);
    }
    assert.deepEqual(patches, [{ id: 'resilience', config: result.row }, { id: 'dsh-daruma', disabled: true }],
      `seed ${SEED} round ${round}: ${JSON.stringify(rows)}`);
    n++;
  }
  t.diagnostic(`${n} rounds`);
});

test(`fuzz (seed ${SEED}): aliases are refused exactly when they repeat too many values or hold themselves`, async (t) => {
  const g = generator(SEED ^ 0x5bd1e995);
  let n = 0;
  let refused = 0;
  for (const round of rounds()) {
    // Anchored lists n0..nk, each of scalars and aliases to earlier lists
    // (now and then to itself: a value that holds itself).
    const lists = [];
    let written = 0; // the values the text spells out, aliases aside
    let cycle = false;
    const count = 2 + g.int(9);
    for (let i = 0; i < count; i++) {
      const items = [];
      for (let k = 1 + g.int(12); k > 0; k--) {
        if (i > 0 && g.next() < 0.8) items.push({ alias: g.int(i) });
        else if (g.next() < 0.01) {
          items.push({ alias: i });
          cycle = true;
        } else {
          items.push({ scalar: `v${g.int(100)}` });
          written++;
        }
      }
      lists.push(items);
      written++;
    }
    const yaml = ['- id: dsh-daruma', '  config:', ...lists.map((items, i) =>
      `    n${i}: &n${i} [${items.map((it) => ('alias' in it ? `*n${it.alias}` : it.scalar)).join(', ')}]`)].join('\n');
    // The oracle: the values with every alias expanded, counted one by one
    // (up to a cap past the bound). The rows around them count the same
    // expanded or not: refused exactly when the lists add too many.
    const cap = MAX_ALIASED_VALUES + written + 1;
    let expanded = 0;
    const walk = (i) => {
      for (const it of lists[i]) {
        if (expanded > cap) return;
        expanded++;
        if ('alias' in it) walk(it.alias);
      }
    };
    if (!cycle) for (let i = 0; i < lists.length && expanded <= cap; i++) { expanded++; walk(i); }
    const outcome = await parsePatch(yaml, 'fuzz.yml').then(() => undefined, (e) => e.message);
    const why = `seed ${SEED} round ${round}: ${expanded} values, ${written} written:\n${yaml}`;
    if (cycle) assert.match(outcome ?? '', /holds itself/, why);
    else if (expanded - written > MAX_ALIASED_VALUES) assert.match(outcome ?? '', /aliases repeat more than/, why);
    else assert.equal(outcome, undefined, why);
    if (outcome) refused++;
    n++;
  }
  t.diagnostic(`${n} documents, ${refused} refused`);
});
