// @ts-check
// The bundled skill, `configure-resilience` (as dsh-model-failover shipped
// `configure-model-failover`): it teaches the agent to read what the plugin
// sees and propose a row. Its text is skills/configure-resilience/SKILL.md,
// read once, when the host first asks for the skill catalog.
//
// A skill is model-visible: its name and description go into every
// session's skill catalog. So it is offered only when the module's resolved
// config says `skill: true` (off by default: policy/config.go DefaultSkill
// says why). It is offered through a skill provider of the plugin's own
// rather than registered outright, because the host asks a provider at each
// session's first step and waits for its answer: a row that states the key
// is answered by the module, even when that first step comes before the
// module is up, and a live reconfigure re-lists the catalog.

import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { SKILL_DEFAULT } from './policy-defaults.js';

export const SKILL_PATH = fileURLToPath(new URL('../skills/configure-resilience/SKILL.md', import.meta.url));
/** The provider's name in the host's skill registry. */
export const PROVIDER = 'dsh-resilience';
// The host's rank for packaged skills (@deepseek-ai/dsh-skill BUNDLED_SKILL_RANK):
// a project's or the user's own skill of the same name wins over this one.
const BUNDLED_RANK = 600;

/**
 * The file as a skill definition: its frontmatter's name, description and whenToUse, and its body.
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
 * Whether the skill is offered: the running module's resolved `skill`; before
 * the module is up, its default (generated from its resolve) for a row that
 * leaves the key out, and the module's own answer, once it is up, for a row
 * that states it. A row the module refuses offers nothing.
 * @param {object} o
 * @param {() => {skill?: boolean} | undefined} o.resolved - the running module's resolved config.
 * @param {boolean} o.rowStates - whether the row as written has the key.
 * @param {() => Promise<unknown>} o.whenUp - the module's bring-up (started if it has not).
 * @returns {Promise<boolean>}
 */
export async function skillWanted({ resolved, rowStates, whenUp }) {
  const now = resolved();
  if (now) return now.skill === true;
  if (!rowStates) return SKILL_DEFAULT;
  try {
    await whenUp();
  } catch {
    return false;
  }
  return resolved()?.skill === true;
}

/**
 * Offers the skill through the host's skills registry, when the host has one.
 * A missing or bad file costs the skill only, never the plugin.
 * @param {import("@deepseek-ai/cordis").Context} ctx
 * @param {{warn: (...args: unknown[]) => void}} logger
 * @param {() => Promise<boolean>} wanted - skillWanted, bound.
 * @returns {{changed: () => void}} `changed` after a live reconfigure: the host lists the catalog again.
 */
export function installSkill(ctx, logger, wanted) {
  /** @type {Promise<ReturnType<typeof parseSkill> | undefined> | undefined} */
  let loading;
  const load = () => (loading ??= readFile(SKILL_PATH, 'utf8').then(parseSkill).catch((e) => {
    logger.warn('the bundled skill is not offered: %s', e?.message ?? e);
    return undefined;
  }));
  let invalidate = () => {};
  /** @type {any} the host's SkillProvider: list the candidate when wanted, load its body */
  const provider = {
    name: PROVIDER,
    async list() {
      const skill = (await wanted().catch(() => false)) ? await load() : undefined;
      if (!skill) return [];
      const definition = { ...skill, invocation: { modelInvocable: true, userInvocable: true }, provider: PROVIDER, path: SKILL_PATH };
      const { content: _body, ...summary } = definition;
      return [{ ...summary, rank: BUNDLED_RANK, locator: definition }];
    },
    async get(/** @type {{locator: unknown}} */ candidate) {
      return candidate.locator;
    },
  };
  ctx.inject(['skills'], (sub) => {
    // @ts-expect-error -- the registry is the host's; the shim needs only registerProvider()
    sub.effect(() => sub.skills.registerProvider((/** @type {{invalidate: () => void}} */ control) => {
      invalidate = control.invalidate; // a no-op once this registration is gone
      return provider;
    }), 'dsh-resilience: skill provider (configure-resilience)');
  });
  return { changed: () => invalidate() };
}
