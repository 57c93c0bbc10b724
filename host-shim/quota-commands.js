// @ts-check
// The quota commands' answers (`/resilience quota|pool|routes` and the quota
// plugin's `/quota-retry`, `/quota-pool`, `/quota-routes`): each reads the
// module's own report (inspect) and words it; a setting goes through the
// rules' one write path (quota.js setQuota/setPool).
import { channelText } from './channel.js';
import { now as clockNow } from './clock.js';
import { roughDuration as age, tableLines, timeOrDash as iso } from './text.js';

/** @import { QuotaRules } from './quota.js' */
/** @typedef {import('@deepseek-ai/dsh-commands').CommandResult} CommandResult */

/** @import { Agent } from '@deepseek-ai/dsh-agent' */
/** @import { ProviderReport, Route } from './policy-types.js' */

/** @param {Route | null | undefined} r */
const routeKey = (r) => (r ? `${channelText(r)}${r.reasoningEffort ? ` (${r.reasoningEffort})` : ''}` : '-');

/** @returns {CommandResult} */
const moduleFailed = () => ({ kind: 'error', text: 'dsh-resilience: the policy module failed; see the audit log' });

/**
 * `quota on|off|default|status` for the command's agent.
 * @param {QuotaRules} rules
 * @param {Agent | undefined} agent
 * @param {string | undefined} arg
 */
export const quotaCommand = (rules, agent, arg) => sessionCommand(rules, agent, arg, 'quota');

/**
 * `pool <pool>|off|default|status` for the command's agent.
 * @param {QuotaRules} rules
 * @param {Agent | undefined} agent
 * @param {string | undefined} arg
 */
export const poolCommand = (rules, agent, arg) => sessionCommand(rules, agent, arg, 'pool');

/**
 * A session setting (`quota` or `pool`) from a command: its status, or the
 * setting changed and the status after it.
 * @param {QuotaRules} rules
 * @param {Agent | undefined} agent
 * @param {string | undefined} arg
 * @param {'quota' | 'pool'} what
 * @returns {CommandResult}
 */
export function sessionCommand(rules, agent, arg, what) {
  if (!rules.active) return { kind: 'error', text: 'dsh-resilience: no pools or quota configured for this row' };
  const t = rules.track(agent);
  const id = String(agent?.id ?? 'unknown');
  if (!arg || arg === 'status') return { kind: 'success', text: describeSession(rules, id) };
  const ok = what === 'quota' ? rules.setQuota(id, t.session, arg) : rules.setPool(id, t.session, arg);
  if (ok === undefined) return moduleFailed();
  if (!ok) return { kind: 'error', text: what === 'quota' ? 'usage: /resilience quota on|off|default|status' : noPool(rules, arg) };
  return { kind: 'success', text: describeSession(rules, id) };
}

/**
 * The answer to a pool name this row does not have.
 * @param {QuotaRules} rules
 * @param {unknown} name
 */
export function noPool(rules, name) {
  return `no pool "${name}" (pools: ${rules.poolNames().join(', ') || 'none'})`;
}

/**
 * @param {QuotaRules} rules
 * @param {string} id - the agent
 */
export function describeSession(rules, id) {
  const s = rules.inspect(id)?.session;
  if (!s) return 'dsh-resilience: the policy module failed; see the audit log';
  const lines = [
    `quota retry: ${s.enabled ? 'on' : 'off'} (${{ session: 'set for this session', inherited: 'inherited from its parent session' }[s.enabledSource] ?? `default: ${rules.resolved.quota.defaultEnabled ? 'on' : 'off'}`})`,
    `pool: ${s.pool ?? (s.poolSource === 'off' ? 'off, never changes provider for a spent allowance' : '(none: the chain)')} (${s.poolSource})${s.route ? `, route ${routeKey(s.route)}` : ''}`,
  ];
  if (s.wait) lines.push(`waiting since ${iso(s.wait.enteredAtMs)}: ${s.wait.attempts} attempt(s), next at ${iso(s.wait.nextAttemptAtMs)}`);
  return lines.join('\n');
}

/**
 * `/resilience routes [pool]`: each pool's routes, readings and marks.
 * @param {QuotaRules} rules
 * @param {string} [only] - one pool's name
 * @returns {CommandResult}
 */
export function routesTable(rules, only) {
  const r = rules.inspect();
  if (!r) return moduleFailed();
  const pools = r.pools.filter((p) => !only || p.name === only);
  if (only && pools.length === 0) return { kind: 'error', text: noPool(rules, only) };
  const now = clockNow(); // the module's clock, as its times are
  const prov = new Map(r.providers.map((p) => [p.provider, p]));
  const out = [];
  for (const p of pools) {
    out.push(`pool ${p.name}: new sessions get ${routeKey(p.choice)}${p.usable ? '' : ' (no route usable)'}`);
    const rows = [['route', 'usable', 'why', 'last reading', 'exhausted until']];
    for (const rr of p.routes) {
      const pr = prov.get(rr.route.provider);
      rows.push([routeKey(rr.route), rr.usable ? 'yes' : 'no', rr.why, readingText(pr, now), pr?.markedUntilMs ? `${iso(pr.markedUntilMs)} (in ${age(pr.markedUntilMs - now)})` : '-']);
    }
    out.push(...tableLines(rows, { rule: true }), '');
  }
  if (pools.length === 0) out.push('No pools configured.');
  return { kind: 'success', text: out.join('\n').trimEnd() };
}

/**
 * @param {ProviderReport | undefined} p
 * @param {number} now - the module's clock
 */
function readingText(p, now) {
  if (!p?.hasBalance) return '(no script)';
  const r = p.reading;
  if (!r) return p.refreshing ? '(reading…)' : '(none yet)';
  if (!r.ok) return `missing, ${age(now - r.atMs)} ago`;
  return `${r.remaining}${p.unit ? ` ${p.unit}` : ''}, ${age(now - r.atMs)} ago${/** @type {number} */ (r.remaining) < /** @type {number} */ (p.minimumRemaining) ? ` (< ${p.minimumRemaining})` : ''}`;
}
