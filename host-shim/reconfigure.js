// @ts-check
// Live reconfiguration: a new config goes into a fresh module instance, the
// running one's channel health is carried over, and only then does the new
// instance take the old one's place. A config the module refuses changes
// nothing and throws the module's own message (the one activation gives), so
// the settings card can show it word for word.
import { Policy } from './policy.js';

/**
 * Checks a policy config with the module itself.
 * @returns {string | undefined} the module's message when it refuses the config.
 */
export function configProblem(policy, config) {
  try {
    new Policy(policy.compiled, config, policy.logger, () => {});
    return undefined;
  } catch (e) {
    return String(e?.message ?? e);
  }
}

/**
 * Swaps the policy onto `config`, keeping every channel's breaker.
 * Agent-level state (homes, failover counts) starts afresh: it belongs to the
 * turns in flight, and the next request re-learns it.
 * @throws {Error} the module's message when it refuses the config.
 */
export function reconfigure(policy, config) {
  const next = new Policy(policy.compiled, config, policy.logger, policy.report, policy.record);
  const health = policy.snapshot();
  if (health) next.restore(JSON.stringify(health));
  // The backup, the model info and the exhaustion marks, as the new config takes them.
  policy.retell(next.instance, undefined, next.resolved); // at the module's (monotonic) now
  policy.instance = next.instance;
  policy.configJson = next.configJson;
  policy.resolved = next.resolved;
  policy.health = JSON.stringify(health ?? { channels: [] });
  policy.healthDirty = false;
  return policy.resolved;
}
