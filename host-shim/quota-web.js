// @ts-check
// The web chip's half of the quota rules: a browser's session id matched to
// the session and its agent, what the chip's menu shows of it, and the
// menu's choice written through the commands' own path, so chip and typed
// command never disagree.
import { now as clockNow } from './clock.js';
import { setPoolEvent } from './events.js';
import { noPool } from './quota-commands.js';
import { sessionForms } from './rpc-input.js';

/** @import { QuotaRules } from './quota.js' */
/** @import { SessionSettings } from './quota-settings.js' */
/** @import { QuotaSwitch, ViewQuery } from './policy-types.js' */

/**
 * The web chip's session id (with or without the host's `session-` prefix) as {agent, session}.
 * @param {QuotaRules} rules
 * @param {string} id - as the browser sends it
 * @returns {{agent: string | undefined, session: string}}
 */
export function webSession(rules, id) {
  const forms = sessionForms(String(id));
  for (const f of forms) {
    const agent = rules.agentOf(f);
    if (agent !== undefined) return { agent, session: rules.agents.get(agent)?.session ?? f };
  }
  return { agent: undefined, session: forms.find((f) => rules.settings.get(f)) ?? id };
}

/**
 * A session's saved quota switch and pool as the view's query tells them
 * (WIT `view-query`), as they are told at its first request (quota.js
 * agentEvents): what the module says of a session it has not met yet.
 * @param {SessionSettings | undefined} s - the session's saved settings
 * @returns {Pick<ViewQuery, 'quota' | 'quotaInherited' | 'poolMode' | 'pool' | 'poolInherited'>}
 */
export function savedQuota(s) {
  const pool = s?.pool ? setPoolEvent('', s.pool) : undefined;
  return {
    ...(s?.quota ? { quota: /** @type {QuotaSwitch} */ (s.quota), quotaInherited: s.inherited?.includes('quota') === true } : {}),
    ...(pool ? { poolMode: pool.mode, pool: pool.pool, poolInherited: s?.inherited?.includes('pool') === true } : {}),
  };
}

/**
 * What the chip's menu shows of a session: its switch and pool with their
 * sources, and the pools to choose from; undefined when the row configures
 * no quota rules or the module did not answer. The module's word
 * (policy/quotamenu.go, WIT `quota-menu`), told the session's saved
 * settings for when no agent of this process runs it yet.
 * @param {QuotaRules} rules
 * @param {string | undefined} id - the browser's session id
 */
export function webView(rules, id) {
  if (!id) return undefined;
  const { agent, session } = webSession(rules, id);
  const menu = rules.policy.ask('quota-menu', { nowMs: clockNow(), agent: agent ?? session, ...savedQuota(rules.settings.get(session)) });
  if (!menu?.active) return undefined;
  const { defaultEnabled, pools, enabled, source, poolSource } = menu;
  return { defaultEnabled, pools, enabled, source, pool: menu.pool ?? null, poolSource };
}

/**
 * The web chip's choice. With the session's agent live and the host's
 * commands there, it runs as the typed command does (`/quota-retry x`,
 * `/quota-pool x`): the host logs `command/run`, so the quotaRetry
 * projection folds a menu choice like a typed one. Otherwise it is written
 * as webSet does.
 * @param {QuotaRules} rules
 * @param {string} id - the browser's session id
 * @param {'quota' | 'pool'} what
 * @param {string} arg
 * @returns {Promise<string | undefined>} why it was refused, if it was.
 */
export async function webChoose(rules, id, what, arg) {
  if (!rules.active) return 'no pools or quota configured for this row';
  const valid = what === 'quota' ? ['on', 'off', 'default'] : ['off', 'default', ...rules.poolNames()];
  if (!valid.includes(arg)) return what === 'quota' ? `"${arg}" is not on, off or default` : noPool(rules, arg);
  const { agent } = webSession(rules, id);
  const live = agent !== undefined ? rules.agents.get(agent)?.agent : undefined;
  const commands = rules.ctx?.get?.('commands');
  if (live?.session && typeof commands?.execute === 'function') {
    try {
      const done = await commands.execute(live, `/${what === 'quota' ? 'quota-retry' : 'quota-pool'} ${arg}`, [], AbortSignal.timeout(10_000));
      if (done) return done.result.kind === 'success' ? undefined : done.result.text ?? 'refused';
    } catch {
      // The command path failed (a host without it, a closed session): written directly below.
    }
  }
  return rules.answered(webSet(rules, id, what, arg));
}

/**
 * The web chip's write: `quota` on|off|default or `pool` <pool>|off|default, as the commands do it.
 * @param {QuotaRules} rules
 * @param {string} id - the browser's session id
 * @param {'quota' | 'pool'} what
 * @param {string} arg
 */
export function webSet(rules, id, what, arg) {
  if (!rules.active) return 'no pools or quota configured for this row';
  const { agent, session } = webSession(rules, id);
  const ok = what === 'quota' ? rules.setQuota(agent, session, String(arg)) : rules.setPool(agent, session, String(arg));
  if (ok === undefined) return 'the policy module failed; see the audit log';
  if (!ok) return what === 'quota' ? `"${arg}" is not on, off or default` : noPool(rules, arg);
  return undefined;
}
