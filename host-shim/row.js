// @ts-check
// The plugin's config row: the keys the shim owns are checked here, naming
// the key; every other key belongs to the policy module, which checks its own.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { checkShared } from './shared-config.js';

/**
 * The row's keys the shim owns, as splitConfig checked them.
 * @typedef {object} ShimConfig
 * @property {string} [stateDir]
 * @property {number} [healthRefreshMs]
 * @property {unknown} [shared] - checked by shared-config.js checkShared
 * @property {boolean} [notice]
 * @property {boolean} [enabled]
 */

/**
 * A whole number in [min, max].
 * @param {unknown} v
 * @param {number} min
 * @param {number} max
 */
const integerIn = (v, min, max) => Number.isInteger(v) && /** @type {number} */ (v) >= min && /** @type {number} */ (v) <= max;

/**
 * Config keys the shim owns; every other key belongs to the policy module.
 * Each check answers true, or why the value is refused.
 * @type {Record<keyof ShimConfig, (v: unknown) => true | string>}
 */
const SHIM_KEYS = {
  stateDir: (v) => typeof v === 'string' && v !== '' || 'must be a non-empty string',
  healthRefreshMs: (v) => integerIn(v, 100, 3_600_000) || 'must be an integer between 100 and 3600000',
  shared: (v) => (checkShared(v), true), // throws naming the nested key
  notice: (v) => typeof v === 'boolean' || 'must be true or false', // notice.js
  enabled: (v) => typeof v === 'boolean' || 'must be true or false', // off.js
};

/**
 * @param {unknown} config - the row's config, as the host hands it over.
 * @returns {{shim: ShimConfig, policy: Record<string, unknown>}}
 * @throws {Error} naming the key when a shim key is bad.
 */
export function splitConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('dsh-resilience: the config row must be an object');
  }
  // Keys are the user's: `toString` or `__proto__` must name no member of
  // an object here. No prototype: a `__proto__` key is a key the module
  // refuses by name, never the object's prototype.
  /** @type {Record<string, unknown>} */
  const shim = Object.create(null);
  /** @type {Record<string, unknown>} */
  const policy = Object.create(null);
  for (const [key, value] of Object.entries(config)) {
    if (!Object.hasOwn(SHIM_KEYS, key)) {
      policy[key] = value;
      continue;
    }
    const ok = SHIM_KEYS[/** @type {keyof ShimConfig} */ (key)](value);
    if (ok !== true) throw new Error(`dsh-resilience: config key "${key}": ${ok}`);
    shim[key] = value;
  }
  return { shim: /** @type {ShimConfig} */ (shim), policy }; // each shim key checked above
}

export const dshHome = () => process.env.DSH_HOME || join(homedir(), '.dsh');

/**
 * The state directory: `$DSH_HOME/dsh-resilience` by default. A configured
 * path may start with `~` (the user's home); a relative one is taken against
 * DSH_HOME, not against whatever directory the host was started in, so every
 * host process of one DSH_HOME finds the same files.
 * @param {string | undefined} configured
 */
export function resolveStateDir(configured) {
  if (configured === undefined) return join(dshHome(), 'dsh-resilience');
  if (configured === '~' || configured.startsWith('~/')) return join(homedir(), configured.slice(1));
  return isAbsolute(configured) ? configured : resolve(dshHome(), configured);
}
