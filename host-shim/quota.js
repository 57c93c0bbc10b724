// @ts-check
// The quota rules' shell (policy/quota.go decides): per-session settings and
// their commands, long-term waits the session's switch can end, balance
// scripts on the policy's schedule, the llm-quota-retry Cordis events, the
// llmQuotaRetry service and the quotaRetry session projection.
import { leftFields, servicePoolArg, WAITING } from './compat-quota.js';
import { restoreRouteEvent, setPoolEvent, setQuotaEvent, wakeEvent } from './events.js';
import { QuotaSettings } from './quota-settings.js';
import { now as clockNow } from './clock.js';

/** Cordis events, named as the quota plugin named them so its listeners keep working. */
export const QUOTA_EVENTS = {
  entered: 'llm-quota-retry/entered',
  failover: 'llm-quota-retry/failover',
  left: 'llm-quota-retry/left',
};

const plainChannel = (c) => ({ provider: String(c.provider), model: String(c.model) });
const sameChannel = (a, b) => (!a && !b) || (!!a && !!b && a.provider === b.provider && a.model === b.model);
const routeKey = (r) => (r ? `${r.provider}/${r.model}${r.reasoningEffort ? ` (${r.reasoningEffort})` : ''}` : '-');
const plainRoute = (r) => (r ? { provider: r.provider, model: r.model, ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) } : undefined);

export class QuotaRules {
  /**
   * @param {object} o
   * @param {object} o.ctx - the plugin's context (ctx.get reaches optional services).
   * @param {import('./policy.js').Policy} o.policy
   * @param {(event: object) => object|undefined} o.decide - one policy step with its effects carried out.
   * @param {string} o.settingsPath - the per-session settings file.
   * @param {(record: object) => void} o.report - the audit log.
   * @param {(name: string, payload: object) => void} o.emit
   * @param {AbortSignal} o.lifetime
   */
  constructor({ ctx, policy, decide, settingsPath, report, emit, lifetime }) {
    Object.assign(this, { ctx, policy, decide, report, emit, lifetime });
    // For the type checker only: the fields Object.assign just set.
    /** @type {any} */
    this.ctx;
    /** @type {import('./policy.js').Policy} */
    this.policy;
    /** @type {(event: object) => any} */
    this.decide;
    /** @type {(record: object) => (Promise<void> | void)} */
    this.report;
    /** @type {Promise<void>} every setting's save and audit line so far (answered() waits for it) */
    this.written = Promise.resolve();
    /** @type {(name: string, payload: object) => void} */
    this.emit;
    /** @type {AbortSignal} */
    this.lifetime;
    this.settings = new QuotaSettings(settingsPath, report);
    this.agents = new Map(); // agent id -> {agent, session, turn, step, failure}
    this.bySession = new Map(); // session id -> agent id
    this.waits = new Map(); // agent id -> AbortController of its pending long-term wait
    this.running = new Map(); // provider -> promise of its balance run
    this.refreshTimer = undefined;
    // Every instance the engine brings up (after a trap, on a new config)
    // hears the settings of every session it serves. Exhaustion marks are the
    // module's, in its provider health records: a new instance gets them with
    // the health it is restored from.
    policy.settings = (resolved) => this.sessionEvents(resolved);
  }

  /** The config the module runs now (a live reconfiguration replaces it). */
  get resolved() {
    return this.policy.resolved;
  }

  get active() {
    return this.resolved.quota?.active === true;
  }

  async load() {
    await this.settings.load();
  }

  /** Knows the agent, and on first sight sends its session's settings to the module. */
  track(agent) {
    const id = String(agent?.id ?? 'unknown');
    let t = this.agents.get(id);
    if (t) {
      t.agent = agent;
      return t;
    }
    const session = agent?.session?.id ? String(agent.session.id) : undefined;
    t = { agent, session };
    this.agents.set(id, t);
    if (session) this.bySession.set(session, id);
    if (session && this.active) this.settings.adopt(session, agent.session.header?.parentSession);
    for (const event of this.agentEvents(id, session, this.active)) this.decide(event);
    return t;
  }

  /**
   * What the module must know of the sessions it serves, for an instance
   * running `resolved` (the engine's bring-up tells each new one).
   */
  sessionEvents(resolved) {
    const active = resolved.quota?.active === true;
    return [...this.agents].flatMap(([id, t]) => this.agentEvents(id, t.session, active));
  }

  /**
   * One agent's session settings as module events: quota, pool, then home and pick.
   * @returns {any[]} WIT events (set-quota, set-pool, restore-route)
   */
  agentEvents(id, session, active) {
    if (!session) return [];
    const events = [];
    const s = this.settings.get(session);
    if (s && active) {
      if (s.quota) events.push(setQuotaEvent(id, s.quota));
      if (s.pool) events.push(setPoolEvent(id, s.pool));
    }
    // The session's home and the user's pick, as the module last reported
    // them, after its pool (choosing a pool ends a pick; a pick made since wins).
    if (s?.home || s?.pick) {
      events.push(restoreRouteEvent(id, { home: s.home && plainChannel(s.home), pick: s.pick && plainChannel(s.pick) }));
    }
    return events;
  }

  forget(agent) {
    const id = String(agent?.id ?? 'unknown');
    const t = this.agents.get(id);
    if (t?.session) this.bySession.delete(t.session);
    this.agents.delete(id);
    this.waits.get(id)?.abort(new Error('agent disposed'));
    this.waits.delete(id);
  }

  /**
   * Keeps the session's home for a restarted host: the module's failover says
   * where the session belongs while it is away, its return ends that.
   */
  noteHome(agentId, home) {
    const session = this.agents.get(agentId)?.session;
    if (!session || sameChannel(this.settings.get(session)?.home, home)) return;
    this.settings.set(session, 'home', home ? plainChannel(home) : undefined);
  }

  /** Keeps the session's home and the user's pick, as the module reported both, for a restarted host. */
  noteRoute(agentId, home, pick) {
    const session = this.agents.get(agentId)?.session;
    if (!session) return;
    this.settings.update(session, { home: home ? plainChannel(home) : undefined, pick: pick ? plainChannel(pick) : undefined });
  }

  /** The session's home as the module last reported it (the web chip's). */
  homeOf(sessionId) {
    return this.settings.get(sessionId)?.home;
  }

  /** What the events need of a failed request: its turn, step and failure. */
  noteFailure(payload) {
    const t = this.track(payload.agent);
    Object.assign(t, { turn: payload.turn, step: payload.step, failure: { code: payload.failure?.code, status: payload.failure?.status } });
  }

  // ---- effects (effects.js calls these)

  onWait(fx) {
    const t = this.agents.get(fx.agent) ?? {};
    const base = { session: t.session, agent: fx.agent, provider: fx.provider, pool: fx.pool, turn: t.turn, step: t.step,
      enteredAt: fx.enteredAtMs, attempts: fx.attempts };
    if (fx.phase !== 'left') this.hold(fx.agent); // the wait is pending from here: isRetrying, and the switch can end it
    if (fx.phase !== 'left') t.pool = fx.pool; // for stateOf
    if (fx.phase === 'entered') {
      this.emit(QUOTA_EVENTS.entered, { ...base, ...WAITING, failure: t.failure, nextAttemptAt: fx.nextAttemptAtMs, at: fx.nextAttemptAtMs });
    } else if (fx.phase === 'left') {
      this.waits.get(fx.agent)?.abort(new Error(`quota wait left: ${fx.reason}`));
      this.waits.delete(fx.agent); // a listener of `left` reads stateOf undefined, isRetrying false
      const leftAt = clockNow(); // the module's clock, as enteredAtMs is
      this.emit(QUOTA_EVENTS.left, { ...base, ...leftFields(fx.enteredAtMs, leftAt), reason: fx.reason, leftAt });
    }
  }

  onRouted(fx) {
    if (fx.cause === 'assigned') return; // a command's choice, not a failover
    const t = this.agents.get(fx.agent) ?? {};
    this.emit(QUOTA_EVENTS.failover, { session: t.session, agent: fx.agent, failure: fx.cause === 'exhausted' ? undefined : t.failure,
      provider: fx.from?.provider, from: plainRoute(fx.from), to: plainRoute(fx.to), pool: fx.pool, turn: t.turn, step: t.step, at: Date.now() });
  }

  /** Runs a provider's balance script and hands the reading to the module. */
  refresh(provider) {
    const b = this.resolved.quota.balances.find((x) => x.provider === provider);
    if (!b || this.running.has(provider)) return this.running.get(provider);
    const started = Date.now();
    // balance.js is loaded with the first reading, off the start-up path of rows without balances.
    const run = import('./balance.js').then(({ runBalance }) => runBalance(this.ctx, b, this.lifetime)).then((reading) => {
      this.running.delete(provider);
      if (this.lifetime.aborted) return;
      const { why, ...event } = reading;
      // The audit line has the number or the reason, never the script's output.
      this.report({ type: 'balance', provider, ok: event.ok, remaining: event.remaining, why, ms: Date.now() - started });
      this.decide(event);
    });
    this.running.set(provider, run);
    return run;
  }

  scheduleRefresh(atMs) {
    clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    if (atMs > 0 && !this.lifetime.aborted) {
      this.refreshTimer = setTimeout(() => { this.refreshTimer = undefined; this.decide(wakeEvent()); }, Math.max(0, atMs - clockNow()));
      this.refreshTimer.unref?.();
    }
  }

  dispose() {
    clearTimeout(this.refreshTimer);
    for (const w of this.waits.values()) w.abort(new Error('dsh-resilience disposed'));
    return Promise.allSettled([...this.running.values(), this.settings.queue]);
  }

  // ---- long-term waits

  /** The controller the session's switch aborts, for the wait the module just entered. */
  hold(agentId) {
    let ac = this.waits.get(agentId);
    if (!ac || ac.signal.aborted) {
      ac = new AbortController();
      this.waits.set(agentId, ac);
    }
    return ac;
  }

  releaseHold(agentId, ac) {
    if (this.waits.get(agentId) === ac) this.waits.delete(agentId);
  }

  // ---- reports

  inspect(agentId) {
    return this.policy.inspect(clockNow(), agentId);
  }

  /**
   * The frozen long-term wait state of a session (service `stateOf`), or
   * undefined outside a wait: the quota plugin's callers test
   * `stateOf(s) === undefined` for "not waiting" (compat-quota.js).
   */
  stateOf(agentId) {
    if (agentId === undefined) return undefined;
    const w = this.inspect(agentId)?.session?.wait;
    const pending = this.waits.has(agentId);
    if (!w && !pending) return undefined;
    const t = this.agents.get(agentId) ?? {};
    return Object.freeze({
      pending, retrying: true, attempts: w?.attempts ?? 0, enteredAt: w?.enteredAtMs, nextAttemptAt: w?.nextAttemptAtMs, at: w?.nextAttemptAtMs,
      provider: w?.provider, pool: t.pool, turn: t.turn, step: t.step,
    });
  }

  /** The agent id of a session given as an id, a Session, or an Agent. */
  agentOf(session) {
    if (session == null) return undefined;
    if (typeof session === 'string') return this.bySession.get(session) ?? (this.agents.has(session) ? session : undefined);
    if (session.session?.id) return String(session.id); // an Agent
    if (session.id !== undefined) return this.bySession.get(String(session.id));
    return undefined;
  }

  sessionOf(session) {
    if (typeof session === 'string') return session;
    return session?.session?.id ? String(session.session.id) : session?.id !== undefined ? String(session.id) : undefined;
  }

  // ---- commands

  /** `quota on|off|default|status` for the command's agent. */
  quotaCommand(agent, arg) {
    return this.sessionCommand(agent, arg, 'quota', () => 'usage: /resilience quota on|off|default|status');
  }

  /** `pool <pool>|off|default|status` for the command's agent. */
  poolCommand(agent, arg) {
    return this.sessionCommand(agent, arg, 'pool', (a) => this.noPool(a));
  }

  /**
   * A session setting (`quota` or `pool`) from a command: its status, or the
   * setting changed and the status after it; `refused(arg)` words a value the
   * module did not take.
   * @returns {import('@deepseek-ai/dsh-commands').CommandResult}
   */
  sessionCommand(agent, arg, what, refused) {
    if (!this.active) return { kind: 'error', text: 'dsh-resilience: no pools or quota configured for this row' };
    const t = this.track(agent);
    const id = String(agent?.id ?? 'unknown');
    if (!arg || arg === 'status') return { kind: 'success', text: this.describeSession(id) };
    const ok = what === 'quota' ? this.setQuota(id, t.session, arg) : this.setPool(id, t.session, arg);
    if (ok === undefined) return moduleFailed();
    if (!ok) return { kind: 'error', text: refused(arg) };
    return { kind: 'success', text: this.describeSession(id) };
  }

  /** The answer to a pool name this row does not have. */
  noPool(name) {
    return `no pool "${name}" (pools: ${this.poolNames().join(', ') || 'none'})`;
  }

  /**
   * The one write path of the session's switch (the command and the web
   * chip): on, off, or back to default; false for another word, undefined
   * when the module failed. A session with no agent yet keeps the setting
   * for its first request (track() hands it over).
   */
  setQuota(agentId, sessionId, arg) {
    if (!['on', 'off', 'default'].includes(arg)) return false;
    if (agentId !== undefined && !this.decide(setQuotaEvent(agentId, arg))) return undefined;
    const saved = sessionId ? this.settings.set(sessionId, 'quota', arg === 'default' ? undefined : arg) : undefined;
    this.wrote(saved, this.report({ type: 'quota-switch', session: sessionId, agent: agentId, mode: arg }));
    return true;
  }

  /** The web chip's session id (with or without the host's `session-` prefix) as {agent, session}. */
  webSession(id) {
    const forms = [id, `session-${id}`, String(id).replace(/^session-/, '')];
    for (const f of forms) {
      const agent = this.agentOf(f);
      if (agent !== undefined) return { agent, session: this.agents.get(agent)?.session ?? f };
    }
    return { agent: undefined, session: forms.find((f) => this.settings.get(f)) ?? id };
  }

  /**
   * What the chip's menu shows of a session: its switch and pool with their
   * sources, and the pools to choose from; undefined when the row configures
   * no quota rules.
   */
  webView(id) {
    if (!this.active || !id) return undefined;
    const { agent, session } = this.webSession(id);
    const base = { defaultEnabled: this.resolved.quota.defaultEnabled === true, pools: this.poolNames() };
    const s = agent !== undefined ? this.inspect(agent)?.session : undefined;
    if (s) {
      return { ...base, enabled: !!s.enabled, source: s.enabledSource === 'session' ? 'session' : 'default', pool: s.pool ?? null, poolSource: s.poolSource ?? 'default' };
    }
    const own = this.settings.get(session) ?? {};
    return {
      ...base,
      enabled: own.quota ? own.quota === 'on' : base.defaultEnabled,
      source: own.quota ? 'session' : 'default',
      pool: own.pool && own.pool !== 'off' ? own.pool : null,
      poolSource: own.pool === 'off' ? 'off' : own.pool ? 'session' : 'default',
    };
  }

  /**
   * The web chip's choice. With the session's agent live and the host's
   * commands there, it runs as the typed command does (`/quota-retry x`,
   * `/quota-pool x`): the host logs `command/run`, so the quotaRetry
   * projection folds a menu choice like a typed one. Otherwise it is written
   * as webSet does.
   * @returns {Promise<string | undefined>} why it was refused, if it was.
   */
  async webChoose(id, what, arg) {
    if (!this.active) return 'no pools or quota configured for this row';
    const valid = what === 'quota' ? ['on', 'off', 'default'] : ['off', 'default', ...this.poolNames()];
    if (!valid.includes(arg)) return what === 'quota' ? `"${arg}" is not on, off or default` : this.noPool(arg);
    const { agent } = this.webSession(id);
    const live = agent !== undefined ? this.agents.get(agent)?.agent : undefined;
    const commands = this.ctx?.get?.('commands');
    if (live?.session && typeof commands?.execute === 'function') {
      try {
        const done = await commands.execute(live, `/${what === 'quota' ? 'quota-retry' : 'quota-pool'} ${arg}`, [], AbortSignal.timeout(10_000));
        if (done) return done.result.kind === 'success' ? undefined : done.result.text ?? 'refused';
      } catch {
        // The command path failed (a host without it, a closed session): written directly below.
      }
    }
    return this.answered(this.webSet(id, what, arg));
  }

  /** The web chip's write: `quota` on|off|default or `pool` <pool>|off|default, as the commands do it. */
  webSet(id, what, arg) {
    if (!this.active) return 'no pools or quota configured for this row';
    const { agent, session } = this.webSession(id);
    const ok = what === 'quota' ? this.setQuota(agent, session, String(arg)) : this.setPool(agent, session, String(arg));
    if (ok === undefined) return 'the policy module failed; see the audit log';
    if (!ok) return what === 'quota' ? `"${arg}" is not on, off or default` : this.noPool(arg);
    return undefined;
  }

  /** Puts a session into a pool (name), off, or back to default; false for an unknown pool. */
  setPool(agentId, sessionId, arg) {
    if (arg !== 'off' && arg !== 'default' && !this.poolNames().includes(arg)) return false;
    if (agentId !== undefined && !this.decide(setPoolEvent(agentId, arg))) return undefined;
    const saved = sessionId ? this.settings.set(sessionId, 'pool', arg === 'default' ? undefined : arg) : undefined;
    this.wrote(saved, this.report({ type: 'quota-pool', session: sessionId, agent: agentId, pool: arg }));
    return true;
  }

  /** Notes a setting's save and its audit line, so an answer can wait for both. */
  wrote(...writes) {
    this.written = Promise.allSettled([this.written, ...writes]).then(() => undefined);
  }

  /**
   * A command's or the chip's answer, once every setting changed so far is
   * saved and its audit line written: a confirmed setting is on disk, and the
   * log already holds it when the user reads it.
   */
  async answered(result) {
    await this.written;
    return result;
  }

  poolNames() {
    return (this.resolved.pools ?? []).map((p) => p.name);
  }

  describeSession(id) {
    const s = this.inspect(id)?.session;
    if (!s) return 'dsh-resilience: the policy module failed; see the audit log';
    const lines = [
      `quota retry: ${s.enabled ? 'on' : 'off'} (${s.enabledSource === 'session' ? 'set for this session' : `default: ${this.resolved.quota.defaultEnabled ? 'on' : 'off'}`})`,
      `pool: ${s.pool ?? (s.poolSource === 'off' ? 'off' : '(none: the chain)')} (${s.poolSource})${s.route ? `, route ${routeKey(s.route)}` : ''}`,
    ];
    if (s.wait) lines.push(`waiting since ${iso(s.wait.enteredAtMs)}: ${s.wait.attempts} attempt(s), next at ${iso(s.wait.nextAttemptAtMs)}`);
    return lines.join('\n');
  }

  /**
   * `/resilience routes [pool]`: each pool's routes, readings and marks.
   * @returns {import('@deepseek-ai/dsh-commands').CommandResult}
   */
  routesTable(only) {
    const r = this.inspect();
    if (!r) return { kind: 'error', text: 'dsh-resilience: the policy module failed; see the audit log' };
    const pools = r.pools.filter((p) => !only || p.name === only);
    if (only && pools.length === 0) return { kind: 'error', text: this.noPool(only) };
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
      out.push(...table(rows), '');
    }
    if (pools.length === 0) out.push('No pools configured.');
    return { kind: 'success', text: out.join('\n').trimEnd() };
  }

  // ---- the llmQuotaRetry service

  service() {
    const self = this;
    return Object.freeze({
      isRetrying: (session) => { const id = self.agentOf(session); return id !== undefined && self.waits.has(id); },
      stateOf: (session) => self.stateOf(self.agentOf(session)),
      /** Refreshes the pool's stale readings first (bounded by its slowest script), then chooses. */
      async pickRoute(pool) {
        let r = self.inspect();
        const p = r?.pools.find((x) => x.name === pool);
        if (!p) return undefined;
        const stale = new Set(p.routes.map((x) => x.route.provider)
          // @ts-expect-error -- r is set (p was found in it); the checker loses that in the callback
          .filter((name) => r.providers.find((x) => x.provider === name && x.hasBalance && x.stale)));
        await Promise.all([...stale].map((name) => self.refresh(name)));
        r = self.inspect();
        return plainRoute(r?.pools.find((x) => x.name === pool)?.choice);
      },
      setPool(session, pool) {
        const arg = servicePoolArg(pool);
        if (arg !== 'off' && arg !== 'default' && !self.poolNames().includes(arg)) return false;
        return self.setPool(self.agentOf(session), self.sessionOf(session), arg) === true;
      },
      assignPool(session, pool) { return this.setPool(session, pool); },
      poolOf(session) {
        const id = self.agentOf(session);
        if (id !== undefined) return self.inspect(id)?.session?.pool;
        const s = self.settings.get(self.sessionOf(session));
        return s?.pool && s.pool !== 'off' ? s.pool : undefined;
      },
      report: () => self.inspect(),
    });
  }

  // ---- the quotaRetry session projection

  /**
   * A pure fold over host-known events: the session's quota commands
   * (`command/run` with their arguments) and the route of its last request
   * (`request/header`). A forked session's log starts with its parent's
   * events, so it shows the inherited settings too.
   */
  projection() {
    const quota = this.resolved.quota;
    const pools = (this.resolved.pools ?? []).map((p) => ({ name: p.name, routes: p.routes.map(plainRoute) }));
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
        const parsed = parseQuotaCommand(event.data?.name, event.data?.args);
        if (!parsed) return state;
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

/** `/resilience quota x`, `/quota-retry x`, `/resilience pool x`, `/quota-pool x` as {kind, arg}. */
export function parseQuotaCommand(name, args) {
  const words = String(args ?? '').trim().split(/\s+/).filter(Boolean);
  if (name === 'quota-retry') return { kind: 'quota', arg: words[0] };
  if (name === 'quota-pool') return { kind: 'pool', arg: words[0] };
  if (name === 'resilience' && (words[0] === 'quota' || words[0] === 'pool')) return { kind: words[0], arg: words[1] };
  return undefined;
}

/** @returns {import('@deepseek-ai/dsh-commands').CommandResult} */
function moduleFailed() {
  return { kind: 'error', text: 'dsh-resilience: the policy module failed; see the audit log' };
}

const iso = (ms) => (ms ? new Date(ms).toISOString().replace('T', ' ').slice(0, 19) : '-');

function age(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
}

function readingText(p, now) {
  if (!p?.hasBalance) return '(no script)';
  const r = p.reading;
  if (!r) return p.refreshing ? '(reading…)' : '(none yet)';
  if (!r.ok) return `missing, ${age(now - r.atMs)} ago`;
  return `${r.remaining}${p.unit ? ` ${p.unit}` : ''}, ${age(now - r.atMs)} ago${r.remaining < p.minimumRemaining ? ` (< ${p.minimumRemaining})` : ''}`;
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  return lines;
}
