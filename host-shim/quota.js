// @ts-check
// The quota rules' shell (policy/quota.go decides): the sessions it serves
// and their settings told to the module, the one write path of those
// settings, and the quota shell's effect subscriber (homes kept for a
// restart, long-term waits held, the llm-quota-retry Cordis events, balance
// scripts run: quota-balances.js). Around it, by role: quota-settings.js
// (the settings file), quota-commands.js (the commands' answers),
// quota-web.js (the chip), quota-service.js (llmQuotaRetry),
// quota-projection.js (the quotaRetry session projection).
import { leftFields, WAITING } from './compat-quota.js';
import { Balances } from './quota-balances.js';
import { quotaProjection } from './quota-projection.js';
import { quotaService } from './quota-service.js';
import { restoreRouteEvent, setPoolEvent, setQuotaEvent } from './events.js';
import { QuotaSettings } from './quota-settings.js';
import { now as clockNow } from './clock.js';
import { sameChannel } from './channel.js';

/** @import { Channel, Effect, EffectQuotaRouted, EffectQuotaWait, Event, ResolvedConfig, Route } from './policy-types.js' */
/** @import { Agent } from '@deepseek-ai/dsh-agent' */
/** @import { RequestErrorPayload } from './requests.js' */

/**
 * What the quota shell knows of an agent it serves.
 * @typedef {object} Tracked
 * @property {Agent | undefined} agent - the host's agent, as last seen
 * @property {string | undefined} session - its session's id
 * @property {number} [turn] - of its last failed request
 * @property {number} [step]
 * @property {{code?: string, status?: number}} [failure]
 * @property {string | null} [pool] - its pool, from its long-term wait
 */

/**
 * A session as the service's callers name it: its id, its Session, or its Agent.
 * @typedef {string | {id?: unknown, session?: {id?: unknown}} | null | undefined} SessionRef
 */

/** Cordis events, named as the quota plugin named them so its listeners keep working. */
export const QUOTA_EVENTS = {
  entered: 'llm-quota-retry/entered',
  failover: 'llm-quota-retry/failover',
  left: 'llm-quota-retry/left',
};

// Causes of a quota-routed move that name no failure of the request (policy quota.go).
const MOVE_CAUSES = new Set(['exhausted', 'outgrown']);
/** @param {{provider: unknown, model: unknown}} c */
const plainChannel = (c) => ({ provider: String(c.provider), model: String(c.model) });
/** @param {Route | null | undefined} r */
const plainRoute = (r) => (r ? { provider: r.provider, model: r.model, ...(r.reasoningEffort ? { reasoningEffort: r.reasoningEffort } : {}) } : undefined);

export class QuotaRules {
  /**
   * @param {object} o
   * @param {import('./host.js').Context} o.ctx - the plugin's context (ctx.get reaches optional services).
   * @param {import('./engine.js').Engine} o.policy
   * @param {(event: object) => object|undefined} o.decide - one policy step with its effects carried out.
   * @param {string} o.settingsPath - the per-session settings file.
   * @param {(record: object) => void} o.report - the audit log.
   * @param {(name: string, payload: object) => void} o.emit
   * @param {AbortSignal} o.lifetime
   */
  constructor({ ctx, policy, decide, settingsPath, report, emit, lifetime }) {
    Object.assign(this, { ctx, policy, decide, report, emit, lifetime });
    // For the type checker only: the fields Object.assign just set.
    /** @type {import('./host.js').Context} */
    this.ctx;
    /** @type {import('./engine.js').Engine} */
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
    /** @type {Map<string, Tracked>} agent id -> what is known of it */
    this.agents = new Map();
    /** @type {Map<string, string>} session id -> agent id */
    this.bySession = new Map();
    /** @type {Map<string, AbortController>} agent id -> the controller of its pending long-term wait */
    this.waits = new Map();
    this.balances = new Balances({ ctx, resolved: () => this.resolved, decide, report, lifetime,
      read: (provider, text) => policy.ask('balance-output', { provider, text }), logger: policy.logger });
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

  /**
   * Knows the agent, and on first sight sends its session's settings to the module.
   * @param {Agent | undefined} agent
   * @returns {Tracked}
   */
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
    if (session && this.active) this.settings.adopt(session, /** @type {Agent} */ (agent).session.header?.parentSession); // a session: an agent
    for (const event of this.agentEvents(id, session, this.active)) this.decide(event);
    return t;
  }

  /**
   * What the module must know of the sessions it serves, for an instance
   * running `resolved` (the engine's bring-up tells each new one).
   * @param {ResolvedConfig} resolved
   * @returns {Event[]}
   */
  sessionEvents(resolved) {
    const active = resolved.quota?.active === true;
    return [...this.agents].flatMap(([id, t]) => this.agentEvents(id, t.session, active));
  }

  /**
   * One agent's session settings as module events: quota, pool, then home and pick.
   * @param {string} id - the agent
   * @param {string | undefined} session - its session's id
   * @param {boolean} active - whether the config has quota rules
   * @returns {Event[]} WIT events (set-quota, set-pool, restore-route)
   */
  agentEvents(id, session, active) {
    if (!session) return [];
    /** @type {Event[]} */
    const events = [];
    const s = this.settings.get(session);
    if (s && active) {
      if (s.quota) events.push(setQuotaEvent(id, s.quota, s.inherited?.includes('quota')));
      if (s.pool) events.push(setPoolEvent(id, s.pool, s.inherited?.includes('pool')));
    }
    // The session's home and the user's pick, as the module last reported
    // them, after its pool (choosing a pool ends a pick; a pick made since wins).
    if (s?.home || s?.pick) {
      events.push(restoreRouteEvent(id, { home: s.home && plainChannel(s.home), pick: s.pick && plainChannel(s.pick) }));
    }
    return events;
  }

  /** @param {{id?: unknown} | undefined} agent - the host's, disposed */
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
   * @param {string} agentId
   * @param {Channel | null | undefined} home
   */
  noteHome(agentId, home) {
    const session = this.agents.get(agentId)?.session;
    if (!session || sameChannel(this.settings.get(session)?.home, home)) return;
    this.settings.set(session, 'home', home ? plainChannel(home) : undefined);
  }

  /**
   * Keeps the session's home and the user's pick, as the module reported both, for a restarted host.
   * @param {string} agentId
   * @param {Channel | null | undefined} home
   * @param {Channel | null | undefined} pick
   */
  noteRoute(agentId, home, pick) {
    const session = this.agents.get(agentId)?.session;
    if (!session) return;
    this.settings.update(session, { home: home ? plainChannel(home) : undefined, pick: pick ? plainChannel(pick) : undefined });
  }

  /**
   * The session's home as the module last reported it (the web chip's).
   * @param {string} sessionId
   */
  homeOf(sessionId) {
    return this.settings.get(sessionId)?.home;
  }

  /**
   * What the events need of a failed request: its turn, step and failure.
   * @param {RequestErrorPayload} payload
   */
  noteFailure(payload) {
    const t = this.track(payload.agent);
    Object.assign(t, { turn: payload.turn, step: payload.step, failure: { code: payload.failure?.code, status: payload.failure?.status } });
  }

  // ---- effects: the quota shell's subscriber (effects.js)

  /**
   * The effects the quota shell acts on: the session's home and pick kept
   * for a restarted host, long-term waits held and announced, quota routes
   * announced, balance scripts run on the module's schedule.
   * @param {Effect} fx
   */
  effect(fx) {
    switch (fx.kind) {
      case 'failover':
        this.noteHome(fx.agent, fx.home ?? fx.from); // kept for a restarted host until the return
        break;
      case 'returned':
        this.noteHome(fx.agent, undefined);
        break;
      case 'session-route':
        this.noteRoute(fx.agent, fx.home, fx.pick);
        break;
      case 'quota-wait':
        this.onWait(fx);
        break;
      case 'quota-routed':
        this.onRouted(fx);
        break;
      case 'refresh-balance':
        this.balances.refresh(fx.provider); // audited with its reading
        break;
      case 'schedule-refresh':
        this.balances.schedule(fx.atMs);
        break;
      default:
    }
  }

  /** @param {EffectQuotaWait} fx */
  onWait(fx) {
    /** @type {Partial<Tracked>} */
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

  /** @param {EffectQuotaRouted} fx */
  onRouted(fx) {
    if (fx.cause === 'assigned') return; // a command's choice, not a failover
    /** @type {Partial<Tracked>} */
    const t = this.agents.get(fx.agent) ?? {};
    this.emit(QUOTA_EVENTS.failover, { session: t.session, agent: fx.agent, failure: MOVE_CAUSES.has(fx.cause) ? undefined : t.failure,
      provider: fx.from?.provider, from: plainRoute(fx.from), to: plainRoute(fx.to), pool: fx.pool, turn: t.turn, step: t.step, at: Date.now() });
  }

  dispose() {
    for (const w of this.waits.values()) w.abort(new Error('dsh-resilience disposed'));
    return Promise.allSettled([this.balances.dispose(), this.settings.queue]);
  }

  // ---- long-term waits

  /**
   * The controller the session's switch aborts, for the wait the module just entered.
   * @param {string} agentId
   */
  hold(agentId) {
    let ac = this.waits.get(agentId);
    if (!ac || ac.signal.aborted) {
      ac = new AbortController();
      this.waits.set(agentId, ac);
    }
    return ac;
  }

  /**
   * @param {string} agentId
   * @param {AbortController} ac - hold()'s, for the wait that ended
   */
  releaseHold(agentId, ac) {
    if (this.waits.get(agentId) === ac) this.waits.delete(agentId);
  }

  // ---- reports

  /** @param {string} [agentId] */
  inspect(agentId) {
    return this.policy.ask('inspect', agentId === undefined ? { nowMs: clockNow() } : { nowMs: clockNow(), agent: agentId });
  }

  /**
   * The frozen long-term wait state of a session (service `stateOf`), or
   * undefined outside a wait: the quota plugin's callers test
   * `stateOf(s) === undefined` for "not waiting" (compat-quota.js).
   * @param {string | undefined} agentId
   */
  stateOf(agentId) {
    if (agentId === undefined) return undefined;
    const w = this.inspect(agentId)?.session?.wait;
    const pending = this.waits.has(agentId);
    if (!w && !pending) return undefined;
    /** @type {Partial<Tracked>} */
    const t = this.agents.get(agentId) ?? {};
    return Object.freeze({
      pending, retrying: true, attempts: w?.attempts ?? 0, enteredAt: w?.enteredAtMs, nextAttemptAt: w?.nextAttemptAtMs, at: w?.nextAttemptAtMs,
      provider: w?.provider, pool: t.pool, turn: t.turn, step: t.step,
    });
  }

  /**
   * The agent id of a session given as an id, a Session, or an Agent.
   * @param {SessionRef} session
   * @returns {string | undefined}
   */
  agentOf(session) {
    if (session == null) return undefined;
    if (typeof session === 'string') return this.bySession.get(session) ?? (this.agents.has(session) ? session : undefined);
    if (session.session?.id) return String(session.id); // an Agent
    if (session.id !== undefined) return this.bySession.get(String(session.id));
    return undefined;
  }

  /**
   * The session id of a session given as an id, a Session, or an Agent.
   * @param {SessionRef} session
   * @returns {string | undefined}
   */
  sessionOf(session) {
    if (typeof session === 'string') return session;
    return session?.session?.id ? String(session.session.id) : session?.id !== undefined ? String(session.id) : undefined;
  }

  // ---- settings: the one write path of the commands, the chip and the service
  // (their answers: quota-commands.js, quota-web.js, quota-service.js)

  /**
   * The one write path of the session's switch (the command and the web
   * chip): on, off, or back to default; false for another word, undefined
   * when the module failed. A session with no agent yet keeps the setting
   * for its first request (track() hands it over).
   * @param {string | undefined} agentId
   * @param {string | undefined} sessionId
   * @param {string} arg
   * @returns {boolean | undefined}
   */
  setQuota(agentId, sessionId, arg) {
    if (!['on', 'off', 'default'].includes(arg)) return false;
    if (agentId !== undefined && !this.decide(setQuotaEvent(agentId, arg))) return undefined;
    const saved = sessionId ? this.settings.set(sessionId, 'quota', arg === 'default' ? undefined : arg) : undefined;
    this.wrote(saved, this.report({ type: 'quota-switch', session: sessionId, agent: agentId, mode: arg }));
    return true;
  }

  /**
   * Puts a session into a pool (name), off, or back to default; false for an unknown pool.
   * @param {string | undefined} agentId
   * @param {string | undefined} sessionId
   * @param {string} arg
   * @returns {boolean | undefined}
   */
  setPool(agentId, sessionId, arg) {
    if (arg !== 'off' && arg !== 'default' && !this.poolNames().includes(arg)) return false;
    if (agentId !== undefined && !this.decide(setPoolEvent(agentId, arg))) return undefined;
    const saved = sessionId ? this.settings.set(sessionId, 'pool', arg === 'default' ? undefined : arg) : undefined;
    this.wrote(saved, this.report({ type: 'quota-pool', session: sessionId, agent: agentId, pool: arg }));
    return true;
  }

  /**
   * Notes a setting's save and its audit line, so an answer can wait for both.
   * @param {...unknown} writes - promises (or nothing) to wait for
   */
  wrote(...writes) {
    this.written = Promise.allSettled([this.written, ...writes]).then(() => undefined);
  }

  /**
   * A command's or the chip's answer, once every setting changed so far is
   * saved and its audit line written: a confirmed setting is on disk, and the
   * log already holds it when the user reads it.
   * @template T
   * @param {T} result
   * @returns {Promise<T>}
   */
  async answered(result) {
    await this.written;
    return result;
  }

  poolNames() {
    return (this.resolved.pools ?? []).map((p) => p.name);
  }

  /** The llmQuotaRetry service (quota-service.js). */
  service() {
    return quotaService(this);
  }

  /** The quotaRetry session projection for the running config (quota-projection.js). */
  projection() {
    return quotaProjection(() => (this.policy.up ? this.resolved : undefined), (state) => this.policy.ask('quota-projection', state));
  }
}
