// The audit record types are defined once (audit-types.js). These tests hold
// the definition, the sources that write records and docs/audit.md together:
// a type written but not defined, defined but never written, or missing from
// the docs fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AUDIT_TYPES, isAuditType } from '../audit-types.js';
import { AuditLog } from '../audit.js';

const ROOT = new URL('../../', import.meta.url);
const SHIM = new URL('../', import.meta.url);
const defined = Object.keys(AUDIT_TYPES);

// `type:` literals in the shim that are not audit records: the host's content
// blocks (`text`) and stream chunks (`finish`).
const NOT_AUDIT = new Set(['text', 'finish']);
// Types built from a template in the shim: none. The effects' records, whose
// types follow a state, outcome or phase, are the module's (the next source).
const TEMPLATES = [];
// The module's audit records (issue #33): each type is a literal there, and
// plugin/codec/audit_test.go checks every one the module writes is defined.
const MODULE_AUDIT = 'plugin/codec/audit.go';

/** The types docs/audit.md lists: the first column of the table under "## Record types". */
async function documented() {
  const md = await readFile(new URL('docs/audit.md', ROOT), 'utf8');
  const section = md.split(/^## /m).find((s) => s.startsWith('Record types'));
  assert.ok(section, 'docs/audit.md has a "## Record types" section');
  return [...section.matchAll(/^\|\s*`([a-z][a-z-]*)`\s*\|/gm)].map((m) => m[1]);
}

/** Every `type: '...'` literal and `type: \`...${` template prefix in the shim's sources. */
async function written() {
  const literals = new Set();
  const templates = new Set();
  for (const f of (await readdir(SHIM)).filter((f) => f.endsWith('.js'))) {
    const src = await readFile(new URL(f, SHIM), 'utf8');
    for (const m of src.matchAll(/\btype:\s*'([a-z][a-z-]*)'/g)) if (!NOT_AUDIT.has(m[1])) literals.add(m[1]);
    for (const m of src.matchAll(/\btype:\s*`([a-z-]*)\$\{/g)) templates.add(m[1]);
  }
  return { literals, templates };
}

/** The record types the module writes: `r.str("type", "...")`, and the `return "..."` of its type choosers. */
async function moduleTypes() {
  const src = await readFile(new URL(MODULE_AUDIT, ROOT), 'utf8');
  const types = [...src.matchAll(/\.str\("type", "([a-z][a-z-]*)"\)|\breturn "([a-z][a-z-]*)"/g)].map((m) => m[1] ?? m[2]);
  assert.ok(types.length >= 20, `${MODULE_AUDIT} names its record types (${types})`);
  return types;
}

test('docs/audit.md lists exactly the defined audit record types', async () => {
  const docs = await documented();
  assert.deepEqual(docs.filter((t, i) => docs.indexOf(t) !== i), [], 'no type listed twice');
  assert.deepEqual([...docs].sort(), [...defined].sort());
});

test('every audit record type the shim writes is defined, and every defined one is written', async () => {
  const { literals, templates } = await written();
  assert.deepEqual([...templates].sort(), [...TEMPLATES].sort(), 'a template type hides its values from this test: write each whole');
  const module = await moduleTypes();
  for (const t of [...literals, ...module]) assert.ok(isAuditType(t), `"${t}" is written but not defined in audit-types.js`);
  const seen = new Set([...literals, ...module]);
  assert.deepEqual(defined.filter((t) => !seen.has(t)), [], 'defined types nothing writes');
});

test('a strict audit log refuses an undefined type; a lenient one keeps the record and names the type', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'audit-types-'));
  try {
    const strict = new AuditLog(join(dir, 'strict.jsonl'), undefined, { strict: true });
    assert.throws(() => strict.write({ type: 'no-such-type' }), /no-such-type.*not defined/);
    assert.throws(() => strict.write({}), /undefined.*not defined/);
    await strict.write({ type: 'boot' });
    const lenient = new AuditLog(join(dir, 'lenient.jsonl'), undefined, { strict: false });
    await lenient.write({ type: 'no-such-type' });
    assert.deepEqual([...lenient.unknownTypes], ['no-such-type']);
    const line = JSON.parse(await readFile(join(dir, 'lenient.jsonl'), 'utf8'));
    assert.equal(line.type, 'no-such-type', 'nothing is lost');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('every defined type has a one-line meaning', () => {
  assert.ok(Object.isFrozen(AUDIT_TYPES));
  for (const [t, meaning] of Object.entries(AUDIT_TYPES)) {
    assert.match(t, /^[a-z][a-z-]*$/);
    assert.ok(typeof meaning === 'string' && meaning.length > 10 && !meaning.includes('\n'), t);
  }
});
