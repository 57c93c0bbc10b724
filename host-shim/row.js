// @ts-check
// The plugin's config row: the keys the shim owns are checked here, naming
// the key; every other key belongs to the policy module, which checks its own.
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { checkNotify } from './notify.js';
import { checkShared } from './shared-config.js';

/** Config keys the shim owns; every other key belongs to the policy module. */
const SHIM_KEYS = {
  stateDir: (v) => typeof v === 'string' && v !== '' || 'must be a non-empty string',
  healthRefreshMs: (v) => Number.isInteger(v) && v >= 100 && v <= 3_600_000 || 'must be an integer between 100 and 3600000',
  shared: (v) => (checkShared(v), true), // throws naming the nested key
  notify: (v) => (checkNotify(v), true), // throws naming notify[i].url etc.
  healthPruneMs: (v) => Number.isInteger(v) && v >= 60_000 && v <= 365 * 86_400_000 || 'must be an integer between 60000 (a minute) and 31536000000 (a year)',
  notice: (v) => typeof v === 'boolean' || 'must be true or false', // notice.js
  enabled: (v) => typeof v === 'boolean' || 'must be true or false', // off.js
};

/**
 * @returns {{shim: Record<string, any>, policy: Record<string, any>}}
 * @throws {Error} naming the key when a shim key is bad.
 */
export function splitConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('dsh-resilience: the config row must be an object');
  }
  const shim = {};
  const policy = {};
  for (const [key, value] of Object.entries(config)) {
    if (!(key in SHIM_KEYS)) {
      policy[key] = value;
      continue;
    }
    const ok = SHIM_KEYS[key](value);
    if (ok !== true) throw new Error(`dsh-resilience: config key "${key}": ${ok}`);
    shim[key] = value;
  }
  return { shim, policy };
}

export const dshHome = () => process.env.DSH_HOME || join(homedir(), '.dsh');

/**
 * The state directory: `$DSH_HOME/dsh-resilience` by default. A configured
 * path may start with `~` (the user's home); a relative one is taken against
 * DSH_HOME, not against whatever directory the host was started in, so every
 * host process of one DSH_HOME finds the same files.
 */
export function resolveStateDir(configured) {
  if (configured === undefined) return join(dshHome(), 'dsh-resilience');
  if (configured === '~' || configured.startsWith('~/')) return join(homedir(), configured.slice(1));
  return isAbsolute(configured) ? configured : resolve(dshHome(), configured);
}
