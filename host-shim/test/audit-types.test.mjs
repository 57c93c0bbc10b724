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
import { carryOut } from '../effects.js';

const ROOT = new URL('../../', import.meta.url);
const SHIM = new URL('../', import.meta.url);
const defined = Object.keys(AUDIT_TYPES);

// `type:` literals in the shim that are not audit records: the host's content
// blocks (`text`) and stream chunks (`finish`).
const NOT_AUDIT = new Set(['text', 'finish']);
// Types built from a template, each carried out below for every value.
const TEMPLATES = ['circuit-', 'quota-wait-'];

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

/** An enum's cases from wit/policy.wit. */
async function witEnum(name) {
  const wit = await readFile(new URL('wit/policy.wit', ROOT), 'utf8');
  const body = wit.match(new RegExp(`enum ${name} \\{([^}]*)\\}`))?.[1];
  assert.ok(body, `wit/policy.wit has enum ${name}`);
  return body.split('\n').map((l) => l.trim()).filter((l) => l && !l.startsWith('//')).map((l) => l.replace(/,$/, ''));
}

/** The records carryOut writes for every circuit state, quota-wait phase and tool outcome. */
async function dynamicTypes() {
  const records = [];
  const env = {
    ctx: { emit() {} }, audit: { write: (r) => records.push(r) }, logger: { info() {}, warn() {} },
    scheduleWake() {}, probe() {}, healthChanged() {},
    quota: { effect() {} },
  };
  const channel = { provider: 'p', model: 'm' };
  const effects = [];
  for (const to of await witEnum('circuit-state')) effects.push({ kind: 'circuit', channel, from: 'closed', to, cause: 'x' });
  // The phases are strings in the WIT; policy/quota.go names them.
  const quotaGo = await readFile(new URL('policy/quota.go', ROOT), 'utf8');
  const phases = [...quotaGo.matchAll(/\bWait\w+\s*=\s*"([a-z-]+)"/g)].map((m) => m[1]);
  assert.ok(phases.length >= 3, `policy/quota.go names the wait phases (${phases})`);
  for (const phase of phases) effects.push({ kind: 'quota-wait', agent: 'a', phase, provider: 'p', attempts: 1, nextAttemptAtMs: 0 });
  for (const outcome of await witEnum('tool-outcome')) effects.push({ kind: 'tool-retry', tool: 't', call: 'c', attempt: 1, outcome, delayMs: 0 });
  for (const to of await witEnum('slow-state')) effects.push({ kind: 'slow', channel, from: 'closed', to, estimateMs: 0, limitMs: 1, calls: 0 });
  carryOut(effects, env);
  return records.map((r) => r.type);
}

test('docs/audit.md lists exactly the defined audit record types', async () => {
  const docs = await documented();
  assert.deepEqual(docs.filter((t, i) => docs.indexOf(t) !== i), [], 'no type listed twice');
  assert.deepEqual([...docs].sort(), [...defined].sort());
});

test('every audit record type the shim writes is defined, and every defined one is written', async () => {
  const { literals, templates } = await written();
  assert.deepEqual([...templates].sort(), [...TEMPLATES].sort(), 'a new template type needs its values carried out here');
  const dynamic = await dynamicTypes();
  for (const t of [...literals, ...dynamic]) assert.ok(isAuditType(t), `"${t}" is written but not defined in audit-types.js`);
  const seen = new Set([...literals, ...dynamic]);
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
