// @ts-check
// The bundled skill, `configure-resilience` (as dsh-model-failover shipped
// `configure-model-failover`): it teaches the agent to read what the plugin
// sees and propose a row. Registered on the host's skills registry as a
// runtime skill, so it needs no skill directory of the user's; its text is
// skills/configure-resilience/SKILL.md, read once when the plugin starts.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';

export const SKILL_PATH = fileURLToPath(new URL('../skills/configure-resilience/SKILL.md', import.meta.url));

/**
 * The file as a skill registration: its frontmatter's name, description and whenToUse, and its body.
 * @param {string} text
 */
export function parseSkill(text) {
  const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
  if (!m) throw new Error('no frontmatter');
  /** @param {string} k */
  const field = (k) => new RegExp(`^${k}: (.+)$`, 'm').exec(m[1])?.[1].trim();
  const name = field('name');
  const description = field('description');
  if (!name || !description) throw new Error('name and description are required');
  const whenToUse = field('whenToUse');
  return { name, description, ...(whenToUse ? { whenToUse } : {}), source: 'bundled', content: m[2].trim() };
}

/**
 * Registers the skill when the host has a skills registry. A missing or bad
 * file costs the skill only, never the plugin.
 * @param {import("@deepseek-ai/cordis").Context} ctx
 * @param {{warn: (...args: unknown[]) => void}} logger
 */
export function installSkill(ctx, logger) {
  ctx.inject(['skills'], async (sub) => {
    let skill;
    try {
      skill = parseSkill(await readFile(SKILL_PATH, 'utf8'));
    } catch (e) {
      logger.warn('the bundled skill was not registered: %s', e?.message ?? e);
      return;
    }
    // @ts-expect-error -- the registry is the host's; the shim needs only register()
    sub.effect(() => sub.skills.register({ ...skill, path: SKILL_PATH }), 'dsh-resilience: skill configure-resilience');
  });
}
