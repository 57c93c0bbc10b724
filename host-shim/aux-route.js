// @ts-check
// The host's auxiliary model calls routed off an open channel (policy/aux.go).
// dsh-compaction-basic and dsh-session-title-llm call ctx.llm.stream() with a
// `purpose` (`compaction`, `session-title`) to the session's own model or the
// last logged route: after a failover that is often the channel the agent
// left, still open. This `llm/stream` listener asks the module where such a
// call should go and, on a swap, sends a copy to that channel through the
// host's llm service (so the stall watchdog and the route's own adapter,
// credentials and retries apply to it); the copy passes through here. Agent
// calls are the agent/request hook's, and the plugin's own probes (no
// purpose) go where they are sent: they exist to test an open channel.

import { afterHostLlm, isAgentLoopRequest } from './host-llm.js';
import { auxRequestEvent } from './events.js';

/** The purposes routed; any other call (a probe, a plugin's own) goes where it was sent. */
export const ROUTED_PURPOSES = new Set(['compaction', 'session-title']);

/** @import { GenerateOptions } from '@deepseek-ai/dsh-llm' */
/** @import { Event, Verdict } from './policy-types.js' */

/**
 * @param {GenerateOptions} options - the call, as the waterfall hands it over (frozen).
 * @param {Verdict | undefined} verdict - the module's answer to its aux-request.
 * @returns {GenerateOptions | undefined} the copy to send instead, when swapped.
 */
export function swappedCopy(options, verdict) {
  if (verdict?.kind !== 'swap') return undefined;
  const copy = { ...options, provider: verdict.provider, model: verdict.model };
  if (verdict.dropReasoningEffort) delete copy.reasoningEffort;
  return copy;
}

/**
 * @param {import('./host.js').Context} ctx - the plugin's Cordis context.
 * @param {(event: Event) => Verdict | undefined} decide - the policy step; its verdict.
 * @param {(record: object) => void} report - the audit log.
 */
export function routeAuxCalls(ctx, decide, report) {
  /** @type {WeakSet<object>} the copies this sent: passed through */
  const copies = new WeakSet();
  ctx.on('llm/stream', afterHostLlm((options, next) => {
    if (copies.has(options) || !ROUTED_PURPOSES.has(options?.purpose) || isAgentLoopRequest(options)) return next();
    const llm = ctx.get('llm');
    if (typeof llm?.stream !== 'function' || !options.provider || !options.model) return next();
    const event = auxRequestEvent(options);
    const copy = swappedCopy(options, decide(event));
    if (!copy) return next(); // pass, or the module failed: the call goes where it was sent
    if (Object.isFrozen(options)) Object.freeze(copy);
    copies.add(copy);
    report({ type: 'aux-routed', purpose: options.purpose, from: event.proposed, to: { provider: copy.provider, model: copy.model } });
    return llm.stream(copy);
  }), true);
}
