// The bundled skill: its file parses into the definition the host's skills
// registry takes; it is offered to the model only when the module's resolved
// config says `skill: true` (off by default); a row that leaves the key out is
// answered without waiting for the module, and a live reconfigure re-lists it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parseSkill, PROVIDER, SKILL_PATH, skillWanted } from '../skill.js';
import { SKILL_DEFAULT } from '../policy-defaults.js';
import { apply } from '../index.js';
import { compileModule } from '../engine.js';
import { usedStateDir } from './state-dirs.mjs';

test('configure-resilience: name, description, whenToUse and a body that names /resilience and migrate', async () => {
  const s = parseSkill(await readFile(SKILL_PATH, 'utf8'));
  assert.equal(s.name, 'configure-resilience');
  assert.match(s.description, /propose a `resilience` row/);
  assert.ok(s.whenToUse);
  assert.equal(s.source, 'bundled');
  assert.match(s.content, /\/resilience/);
  assert.match(s.content, /dsh-resilience migrate/);
  assert.doesNotMatch(s.content, /^---/, 'the frontmatter is not in the body');
});

test('a file without frontmatter is refused', () => {
  assert.throws(() => parseSkill('# just text'), /frontmatter/);
});

test('skillWanted: the running module\'s word; before it is up, its default for a row without the key, its answer for one with it', async () => {
  const never = () => { throw new Error('must not wait for the module'); };
  assert.equal(SKILL_DEFAULT, false, 'off by default: nothing reaches the model unless a key asks');
  assert.equal(await skillWanted({ resolved: () => undefined, rowStates: false, whenUp: never }), SKILL_DEFAULT);
  assert.equal(await skillWanted({ resolved: () => ({ skill: true }), rowStates: true, whenUp: never }), true);
  assert.equal(await skillWanted({ resolved: () => ({ skill: false }), rowStates: true, whenUp: never }), false);
  let up;
  const waited = skillWanted({ resolved: () => up, rowStates: true, whenUp: async () => { up = { skill: true }; } });
  assert.equal(await waited, true, 'a row that states the key is answered by the module once it is up');
  assert.equal(await skillWanted({ resolved: () => undefined, rowStates: true, whenUp: async () => { throw new Error('config key "x"'); } }), false,
    'a row the module refuses offers nothing');
});

/** A Cordis-shaped context with a skills registry that records providers and invalidations. */
function hostWithSkills() {
  const disposers = [];
  const effect = (fn) => { disposers.push(fn()); };
  const skills = {
    providers: [],
    invalidated: 0,
    registerProvider(create) {
      const p = create({ signal: new AbortController().signal, invalidate: () => { skills.invalidated += 1; } });
      skills.providers.push(p);
      return () => { skills.providers.splice(skills.providers.indexOf(p), 1); };
    },
  };
  const services = { skills, commands: { register: () => () => {} } };
  const ctx = {
    logger: () => ({ warn() {}, info() {} }),
    on() {},
    emit() {},
    get: (name) => services[name],
    inject(names, fn) { if (names.every((n) => services[n])) fn({ ...services, on() {}, effect }); },
    effect,
    provide() {},
    async dispose() { for (const d of disposers.reverse()) await d?.(); },
  };
  return { ctx, skills };
}

/** What the host's catalog would list from the plugin's provider. */
const listed = async (skills) => (await Promise.all(skills.providers.map((p) => p.list({})))).flat();

test('a row without `skill` offers no skill; `skill: true` offers configure-resilience, whose body loads', async (t) => {
  for (const [row, offered] of [[{}, false], [{ skill: false }, false], [{ skill: true }, true]]) {
    const stateDir = await usedStateDir('skill-');
    const { ctx, skills } = hostWithSkills();
    t.after(() => ctx.dispose());
    await apply(ctx, { ...row, probes: false, stateDir }, { compiled: compileModule() });
    assert.equal(skills.providers.length, 1, 'the provider is registered whatever the row says: it answers per row');
    const list = await listed(skills);
    assert.deepEqual(list.map((c) => c.name), offered ? ['configure-resilience'] : [], JSON.stringify(row));
    if (!offered) continue;
    const [c] = list;
    assert.equal(c.provider, PROVIDER);
    assert.equal(c.source, 'bundled');
    assert.equal(c.content, undefined, 'the catalog carries no body');
    const body = await skills.providers[0].get(c, {});
    assert.match(body.content, /dsh-resilience migrate/);
    assert.deepEqual(body.invocation, { modelInvocable: true, userInvocable: true });
    await ctx.dispose();
    assert.equal(skills.providers.length, 0, 'the provider goes with the plugin');
  }
});

test('a live reconfigure re-lists the catalog: `skill` turned off withdraws the skill, turned on offers it', async (t) => {
  const stateDir = await usedStateDir('skill-');
  const { ctx, skills } = hostWithSkills();
  t.after(() => ctx.dispose());
  let parts;
  await apply(ctx, { skill: true, probes: false, stateDir }, { compiled: compileModule(), expose: (p) => { parts = p; } });
  await parts.up;
  assert.equal((await listed(skills)).length, 1);
  parts.reconfigure({ skill: false, probes: false });
  assert.equal(skills.invalidated, 1, 'the host is told to list again');
  assert.deepEqual(await listed(skills), []);
  parts.reconfigure({ skill: true, probes: false });
  assert.equal(skills.invalidated, 2);
  assert.equal((await listed(skills)).length, 1);
});

test('a row the module refuses offers no skill', async (t) => {
  const stateDir = await usedStateDir('skill-');
  const { ctx, skills } = hostWithSkills();
  t.after(() => ctx.dispose());
  await apply(ctx, { skill: 'yes', stateDir }, { compiled: compileModule() });
  assert.deepEqual(await listed(skills), []);
});
