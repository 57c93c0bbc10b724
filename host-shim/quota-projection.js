// @ts-check
// The quotaRetry session projection: the client's view of a session's quota
// settings, folded from host-known events. Its state is lossless JSON
// (nulls, never undefined): the host checkpoints it, and a session must
// reopen after a restart, with or without the plugin (proven by e2e/web).
// The host runs the fold over the session's log without the module, so the
// fold is the shim's; what the folded choices amount to under the running
// config is the module's (WIT `quota-projection`), and the view renders it.

import { parseCommandLine } from './command-line.js';

/** @import { ResolvedConfig } from './policy-types.js' */

/**
 * The fold's state: lossless JSON (the host may checkpoint it).
 * @typedef {object} ProjectionState
 * @property {'on' | 'off' | null} quota - the session's switch, null when not set
 * @property {string | null} pool - its pool's name, or off; null when not set
 * @property {{provider: string, model: string} | null} route - its last request's route
 */

/**
 * A session event as the fold reads it: its type, and the few fields of its data it uses.
 * @typedef {{type: string, data?: {header?: {config?: {provider?: unknown, model?: unknown}}, name?: string, args?: unknown}}} FoldedEvent
 */

/**
 * The projection, in the quota plugin's documented format and nothing else:
 * `{enabled, defaultEnabled, source, pool, poolSource, pools}`, `pools` the
 * configured names in order. Where more is needed (routes, readings, marks,
 * how a pool was inferred), the llmQuotaRetry service's report() and
 * `/resilience pool status` carry it.
 * @typedef {object} QuotaRetryProjection
 * @property {boolean | null} enabled - the effective switch (null before the module is up)
 * @property {boolean | null} defaultEnabled - the row's default (null before the module is up)
 * @property {'default' | 'session' | 'inherited'} source
 * @property {string | null} pool - the pool governing the session
 * @property {'default' | 'session' | 'inherited' | 'off'} poolSource
 * @property {string[]} pools
 */

/**
 * A pure fold over host-known events: the session's quota commands
 * (`command/run` with their arguments) and the route of its last request
 * (`request/header`). A forked session's log starts with its parent's
 * events, so it shows the settings it took from them too.
 * Registered at activation, before the module may be up: the fold and the
 * view read the running config when they run. A pool picked while it is not
 * up is kept as picked, and the view names it once the config has it.
 * @param {() => ResolvedConfig | undefined} running - the running config, when the module is up.
 * @param {(state: ProjectionState) => import('./policy-types.js').QuotaProjection | undefined} project -
 *   the module's answer (WIT `quota-projection`), undefined when it is not up.
 */
export function quotaProjection(running, project) {
  return {
    key: 'quotaRetry',
    schema: { parse: (/** @type {unknown} */ v) => v },
    // Version 1's state also held `poolDefault` (for a field the view no
    // longer has): such a checkpoint reads the same, so no new version.
    stateVersion: 1,
    // Lossless JSON only (the host may checkpoint the state): null, never undefined.
    /** @returns {ProjectionState} */
    init: () => ({ quota: null, pool: null, route: null }),
    /**
     * @param {ProjectionState} state
     * @param {FoldedEvent} event
     * @returns {ProjectionState}
     */
    apply(state, event) {
      if (event.type === 'request/header') {
        const c = event.data?.header?.config;
        if (!c?.provider || (state.route && state.route.provider === c.provider && state.route.model === c.model)) return state;
        return { ...state, route: { provider: String(c.provider), model: String(c.model) } };
      }
      if (event.type !== 'command/run') return state;
      const parsed = parseCommandLine(event.data?.name, event.data?.args);
      if ((parsed?.kind !== 'quota' && parsed?.kind !== 'pool') || parsed.arg === undefined) return state;
      if (parsed.kind === 'quota' && (parsed.arg === 'on' || parsed.arg === 'off' || parsed.arg === 'default')) return { ...state, quota: parsed.arg === 'default' ? null : parsed.arg };
      const resolved = running();
      const known = resolved === undefined || (resolved.pools ?? []).some((p) => p.name === parsed.arg);
      if (parsed.kind === 'pool' && (parsed.arg === 'off' || parsed.arg === 'default' || known)) {
        return { ...state, pool: parsed.arg === 'default' ? null : parsed.arg };
      }
      return state;
    },
    /**
     * @param {ProjectionState} state
     * @returns {QuotaRetryProjection}
     */
    view(state) {
      // The fold's fields only: a checkpoint of version 1 also holds poolDefault.
      const answer = project({ quota: state.quota, pool: state.pool, route: state.route });
      if (answer) return /** @type {QuotaRetryProjection} */ (answer);
      // Not up (the host runs projections without the module): the row's
      // default and the pools are not known, the session's own choices are.
      const off = state.pool === 'off';
      return { enabled: state.quota ? state.quota === 'on' : null, defaultEnabled: null, source: state.quota ? 'session' : 'default',
        pool: off ? null : state.pool, poolSource: off ? 'off' : state.pool ? 'session' : 'default', pools: [] };
    },
  };
}
