// @ts-check
// The quotaRetry session projection: the client's view of a session's quota
// settings, folded from host-known events. Its state is lossless JSON
// (nulls, never undefined): the host checkpoints it, and a session must
// reopen after a restart, with or without the plugin (proven by e2e/web).
// The host runs the fold over the session's log without the module, so the
// view words the row's default and the session's own choice itself.

import { parseCommandLine } from './command-line.js';

const plainRoute = (r) => (r ? { provider: r.provider, model: r.model, ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) } : undefined);

/**
 * A pure fold over host-known events: the session's quota commands
 * (`command/run` with their arguments) and the route of its last request
 * (`request/header`). A forked session's log starts with its parent's
 * events, so it shows the inherited settings too.
 * @param {import('./policy-types.js').ResolvedConfig} resolved - the running config: its pools and quota default.
 */
export function quotaProjection(resolved) {
  const quota = resolved.quota;
  const pools = (resolved.pools ?? []).map((p) => ({ name: p.name, routes: p.routes.map(plainRoute) }));
  const names = new Set(pools.map((p) => p.name));
  return {
    key: 'quotaRetry',
    schema: { parse: (v) => v },
    stateVersion: 1,
    // Lossless JSON only (the host may checkpoint the state): null, never undefined.
    init: () => ({ quota: null, pool: null, route: null, poolDefault: false }),
    apply(state, event) {
      if (event.type === 'request/header') {
        const c = event.data?.header?.config;
        if (!c?.provider || (state.route && state.route.provider === c.provider && state.route.model === c.model)) return state;
        return { ...state, route: { provider: String(c.provider), model: String(c.model) } };
      }
      if (event.type !== 'command/run') return state;
      const parsed = parseCommandLine(event.data?.name, event.data?.args);
      if ((parsed?.kind !== 'quota' && parsed?.kind !== 'pool') || parsed.arg === undefined) return state;
      if (parsed.kind === 'quota' && ['on', 'off', 'default'].includes(parsed.arg)) return { ...state, quota: parsed.arg === 'default' ? null : parsed.arg };
      if (parsed.kind === 'pool' && (parsed.arg === 'off' || parsed.arg === 'default' || names.has(parsed.arg))) {
        return { ...state, pool: parsed.arg === 'default' ? null : parsed.arg, poolDefault: parsed.arg === 'default' };
      }
      return state;
    },
    view(state) {
      const enabled = state.quota ? state.quota === 'on' : quota.defaultEnabled;
      let pool = null;
      let poolSource = 'default';
      if (state.pool === 'off') poolSource = 'off';
      else if (state.pool) [pool, poolSource] = [state.pool, 'session'];
      else if (state.route) {
        // @ts-expect-error -- a pool's routes are all there: plainRoute answers undefined only for none
        const holding = pools.filter((p) => p.routes.some((r) => r.provider === state.route.provider && r.model === state.route.model));
        if (holding.length === 1) [pool, poolSource] = [holding[0].name, 'inferred'];
      }
      return { enabled, defaultEnabled: quota.defaultEnabled, source: state.quota ? 'session' : 'default', pool, poolSource, pools,
        ...choices(state) };
    },
  };
}

/**
 * The session's choices in the quota plugin's own values: `quotaRetry` is
 * `on`, `off`, or `inherited` (not set in this session: its parent's, or the
 * row's default); `poolChoice` is a pool name, `default` (handed back to the
 * row's default), `inherited` (not set here), or null (opted out: the quota
 * plugin's `setPool(session, null)`).
 */
function choices(state) {
  return {
    quotaRetry: state.quota ?? 'inherited',
    poolChoice: state.pool === 'off' ? null : state.pool ?? (state.poolDefault ? 'default' : 'inherited'),
  };
}
