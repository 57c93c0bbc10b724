// @ts-check
// Host services reached late (at a plugin's apply most are not there yet),
// and credentials by reference (the Redis password, a balance script's key):
// resolved through the host's credential service at every use, never cached.
import { later } from './timers.js';

/** @import { Context } from './host.js' */

/**
 * The host service `name`, waiting briefly for it to appear; undefined if it does not.
 * @template {'credentials' | 'subprocess'} K
 * @param {Context} ctx
 * @param {K} name
 * @param {number} [waitMs]
 * @returns {Promise<Context[K] | undefined>}
 */
export function serviceOf(ctx, name, waitMs = 1_000) {
  const now = ctx.get(name);
  if (now) return Promise.resolve(now);
  return new Promise((resolve) => {
    const timer = later(() => resolve(undefined), waitMs).unref();
    ctx.inject([name], (sub) => { timer.clear(); resolve(sub[name]); });
  });
}

/**
 * A credential by reference, through the host's credential service (which may
 * appear only after activation: waited for briefly), else the environment.
 * @param {Context} ctx
 * @param {string} ref - the credential's name (an env-style name).
 * @returns {Promise<string | undefined>}
 */
export async function resolveSecret(ctx, ref) {
  const service = await serviceOf(ctx, 'credentials');
  // The host brands references at compile time only: its credentialRef() checks the pattern and returns the string itself.
  const found = await service?.resolve?.(/** @type {import('@deepseek-ai/dsh-credentials').CredentialRef} */ (ref)).catch(() => undefined);
  return found?.value ?? process.env[ref];
}
