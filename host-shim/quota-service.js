// @ts-check
// The llmQuotaRetry service, as the quota plugin offered it, so subagent
// templates and other plugins that call it by name keep working. Every
// answer is the module's (inspect) or goes through the rules' write path.
import { servicePoolArg } from './compat-quota.js';

/** @import { QuotaRules } from './quota.js' */

/** @import { Route } from './policy-types.js' */
/** @import { SessionRef } from './quota.js' */

/** @param {Route | null | undefined} r */
const plainRoute = (r) => (r ? { provider: r.provider, model: r.model, ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) } : undefined);

/** @param {QuotaRules} rules */
export function quotaService(rules) {
  return Object.freeze({
    /** @param {SessionRef} session */
    isRetrying: (session) => { const id = rules.agentOf(session); return id !== undefined && rules.waits.has(id); },
    /** @param {SessionRef} session */
    stateOf: (session) => rules.stateOf(rules.agentOf(session)),
    /**
     * Refreshes the pool's stale readings first (bounded by its slowest script), then chooses.
     * @param {string} pool - its name
     */
    async pickRoute(pool) {
      let r = rules.inspect();
      const p = r?.pools.find((x) => x.name === pool);
      if (!p) return undefined;
      const stale = new Set(p.routes.map((x) => x.route.provider)
        // @ts-expect-error -- r is set (p was found in it); the checker loses that in the callback
        .filter((name) => r.providers.find((x) => x.provider === name && x.hasBalance && x.stale)));
      await Promise.all([...stale].map((name) => rules.balances.refresh(name)));
      r = rules.inspect();
      return plainRoute(r?.pools.find((x) => x.name === pool)?.choice);
    },
    /**
     * @param {SessionRef} session
     * @param {string | null | undefined} pool - a pool's name; null opts out, undefined is the default
     */
    setPool(session, pool) {
      const arg = servicePoolArg(pool);
      if (arg !== 'off' && arg !== 'default' && !rules.poolNames().includes(arg)) return false;
      return rules.setPool(rules.agentOf(session), rules.sessionOf(session), arg) === true;
    },
    /**
     * @param {SessionRef} session
     * @param {string | null | undefined} pool
     */
    assignPool(session, pool) { return this.setPool(session, pool); },
    /** @param {SessionRef} session */
    poolOf(session) {
      const id = rules.agentOf(session);
      if (id !== undefined) return rules.inspect(id)?.session?.pool;
      const s = rules.settings.get(/** @type {string} */ (rules.sessionOf(session))); // none: no settings
      return s?.pool && s.pool !== 'off' ? s.pool : undefined;
    },
    report: () => rules.inspect(),
  });
}
