// The bundled skill's file parses into the registration the host's skills
// registry takes, and a registry-less host costs nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { parseSkill, SKILL_PATH } from '../skill.js';

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
