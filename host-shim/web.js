// @ts-check
// The host half of the web client (client/): one RPC channel the browser
// bundle talks to, and the settings namespace its card edits. It decides
// nothing: status is read from the policy module, a backup goes through the
// same write path as `/resilience backup`, and a config goes through the
// module's own check before it replaces the running one.
//
// Live without polling: `status` is a long poll. The browser sends the
// revision it has; the answer comes when anything the page shows may have
// changed (an effect, an audit record written, a backup, a config) or after
// LONG_POLL_MS with nothing new. What a session left, gave up on or came back
// to, and the dock's last decision, come from the module's effects: this view
// is one of their subscribers (effects.js) and reads no record back, except
// the session's inline rows, which show the log's history (rows()).
// The countdowns tick in the browser from `openUntilMs` and the host's clock.
// What each endpoint takes and answers is web-rpc.d.ts, the contract the
// client (client/*.cjs) reads too: `make typecheck` holds both to it.
import { readFile } from 'node:fs/promises';
import { bodyProblem, excerpt, field, hostKnowsSession, MAX_CHANNEL, MAX_SECTION_BYTES, MAX_VALUE, sameSession, sessionForms, sessionIdProblem } from './rpc-input.js';
import { channelId, channelText, parseChannel as textChannel } from './channel.js';
import { now as clockNow } from './clock.js';
import { recordOf } from './effect-audit.js';
import { savedQuota, webChoose, webSession, webView } from './quota-web.js';
import { CARD_DEFAULTS, CARD_KEYS } from './policy-defaults.js';

/** @import { Channel } from './policy-types.js' */
/** @import { AuditRecord, Candidate, CandidatesAnswer, GiveUpRecord, Refusal, ReportAnswer, RowsAnswer, RpcAnswer, StatusAnswer, ValidateAnswer } from './web-rpc.js' */
/** @import { Context } from './host.js' */

/**
 * What the web half works with.
 * @typedef {object} WebDeps
 * @property {import('./engine.js').Engine} policy - the engine
 * @property {string} auditPath
 * @property {() => Channel | undefined} backup - the current backup channel.
 * @property {(channel: Channel | undefined, source: string) => Promise<string | undefined>} setBackup - the
 *   shared write path; resolves to an error message, or undefined when done.
 * @property {(config: object) => void} applyConfig - reconfigures live; throws the module's message.
 * @property {import('./quota.js').QuotaRules} [quota] - the quota rules, attached once built (the menu's switch and pool).
 * @property {Record<string, unknown>} rowPolicyConfig - the policy part of the row, as configured.
 * @property {string} [sessionsDir] - where the host logs sessions (a session id is checked against it).
 * @property {() => Promise<boolean>} [whenUp] - brings the module up (if it is not) and answers whether it is.
 * @property {() => Promise<boolean>} [upSettled] - whether it is up once its bring-up settled, without starting it.
 */

/** The host's llm service (the picker asks it for models). @typedef {Context['llm']} Llm */

/**
 * The host services the web half is served through, as it uses them:
 * `connection` (dsh-client-connection) and `settings` (dsh-settings), whose
 * declarations host.d.ts does not load; the settings schema is the host's
 * schemastery, which ships no types here.
 * @typedef {object} WebServices
 * @property {{rpc: {handle(channel: string, handler: ReturnType<WebHalf['handler']>, o: {authority: string}): (() => Promise<unknown>) | undefined}}} connection
 * @property {{register(ns: string, schema: unknown, o: {base: object, applies: string, validate: (value: Record<string, unknown>) => void}): SettingsScope}} settings
 */

/**
 * The card's section as the settings service holds it.
 * @typedef {{watch(fn: (value: Record<string, unknown>) => void): () => void, get(): Record<string, unknown>}} SettingsScope
 */

/**
 * The host's session store as a session's route is read from it: a
 * session's logged events, a request header's config among them. (The
 * store's ids are branded strings, and its events a union this reads by
 * `type`.)
 * @typedef {{get(id: string): {events?: readonly {type?: string, data?: {header?: {config?: {provider?: unknown, model?: unknown}}}}[]} | undefined}} SessionLog
 */

export const RPC_CHANNEL = '/dsh-resilience';
export const SETTINGS_NS = 'dsh-resilience';
const LONG_POLL_MS = 20_000;
const MAX_CANDIDATES = 60;
const MODEL_INFO_TIMEOUT_MS = 5_000;
/** Records the inline rows read (by session: the audit's `agent` is the session id). */
const ROW_TYPES = new Set(['failover', 'give-up', 'return', 'retry', 'hedge']);
/** Effects that count as "the last decision" in the dock (and the shim's own: decided()). */
const DECISIONS = new Set(['failover', 'give-up', 'returned', 'retry', 'circuit']);
const MAX_ROW_RECORDS = 500;

const key = channelText; // the page shows and matches channels as "provider/model"
/**
 * A record as the page reads it: the audit names channels as {provider,
 * model} (unambiguous), the page shows and matches them as "provider/model".
 * Its other fields are the audit's (docs/audit.md), taken as written.
 * @param {object} record
 * @returns {AuditRecord}
 */
function forPage(record) {
  /** @type {Record<string, unknown>} */
  const out = { ...record };
  for (const f of ['channel', 'from', 'to', 'route']) {
    const v = /** @type {{provider?: unknown} | null | undefined} */ (out[f]);
    if (v && typeof v === 'object' && typeof v.provider === 'string') out[f] = key(/** @type {Channel} */ (v));
  }
  if (Array.isArray(out.tried)) { // a give-up's channels tried, each with its code
    out.tried = out.tried.map((/** @type {{channel?: unknown, code?: unknown} | null | undefined} */ t) => ({
      channel: t?.channel && typeof t.channel === 'object' ? key(/** @type {Channel} */ (t.channel)) : String(t?.channel ?? '?'), code: t?.code }));
  }
  return /** @type {AuditRecord} */ (/** @type {unknown} */ (out)); // read from the audit: its fields are not checked here
}
/**
 * @template T
 * @param {T} value
 * @returns {{ok: true, value: T}}
 */
const ok = (value) => ({ ok: true, value });
/**
 * A refusal as the host's RPC carries it. The browser's caller
 * (dsh-client-connection) checks an error against the host's own codes and
 * throws on any other, so our reason (INVALID, REFUSED, UNKNOWN_SESSION,
 * UNKNOWN_ENDPOINT) travels inside the host's `bad-request`, as its one
 * issue; a failure of ours is the host's `internal`. The client's call()
 * (client/shell.cjs) hands its callers our reason back as the code.
 * @param {string} code - our reason.
 * @param {string} message - short: never the input whole.
 * @returns {Refusal}
 */
export const refuse = (code, message) => (code === 'INTERNAL'
  ? { ok: false, error: { code: 'internal', message, details: {} } }
  : { ok: false, error: { code: 'bad-request', message, details: { issues: [{ code }] } } });

/**
 * Our reason in a refusal (refuse): the issue's code, else the host's own.
 * @param {{error?: {code?: string, details?: {issues?: {code?: string}[]}}} | null | undefined} answer
 */
export const reasonOf = (answer) => answer?.error?.details?.issues?.[0]?.code ?? answer?.error?.code;

export class WebHalf {
  /** @param {Omit<WebDeps, 'policy'> & Partial<Pick<WebDeps, 'policy'>>} deps - `policy` may come once the engine is built */
  constructor(deps) {
    /** @type {WebDeps} */
    this.deps = /** @type {WebDeps} */ (deps); // deps.policy is attached once the module is built (it audits through tap())
    this.revision = 0;
    /** @type {Map<() => void, string | undefined>} the long polls waiting, each with the session it watches */
    this.waiters = new Map();
    /** @type {AuditRecord | undefined} */
    this.lastDecision = undefined;
    /** @type {Set<string>} the agents (a web session's id, prefixed) whose requests this process sent */
    this.agents = new Set();
    /** @type {Map<string, number>} "provider/model" -> the context window the host declares for it */
    this.windows = new Map();
    /** @type {Context | undefined} the plugin's context, once installed */
    this.ctx = undefined;
  }

  /**
   * The host's model info for a target: its window, shown beside it in the picker and the dock.
   * @param {Channel} channel
   * @param {unknown} tokens - as the host declares it: kept when a positive integer
   */
  window(channel, tokens) {
    const k = key(channel);
    const w = Number.isSafeInteger(tokens) && /** @type {number} */ (tokens) > 0 ? /** @type {number} */ (tokens) : undefined;
    if (this.windows.get(k) === w) return;
    if (w === undefined) this.windows.delete(k);
    else this.windows.set(k, w);
    this.changed();
  }

  /**
   * The dock's "last decision" for what the shim itself decided and audited
   * (a probe's outcome, a backup set, a config applied): told here by the
   * code that decided it, in its record's words. The module's decisions come
   * as effects (effect()).
   * @param {object} record
   */
  decided(record) {
    this.lastDecision = forPage({ at: new Date().toISOString(), ...record });
    this.changed();
  }

  /**
   * One of the module's effects (effects.js hands each one here). What a
   * session left, gave up on or came back to is the module's word, asked
   * again in its view (status()), never inferred from routes or kept here.
   * @param {import('./policy-types.js').Effect} fx
   */
  effect(fx) {
    if (DECISIONS.has(fx.kind)) {
      // Worded as its audit record is (effect-audit.js), channels as the page shows them.
      this.lastDecision = forPage({ at: new Date().toISOString(), .../** @type {object} */ (recordOf(fx, {})?.record) });
    }
    if (fx.kind === 'failover' || fx.kind === 'returned' || fx.kind === 'give-up') this.changed();
  }

  /** Something the page shows changed: answer every waiting long poll. */
  changed() {
    this.revision++;
    for (const wake of [...this.waiters.keys()]) wake();
  }

  /**
   * An agent's request went out (after the policy's verdict): a page
   * watching its session is answered, since where it runs and whether its
   * give-up stands are the module's to say again (status()). Nothing of
   * the route is kept here.
   * @param {{id?: unknown} | undefined} agent - the host's
   */
  requested(agent) {
    const id = String(agent?.id ?? '');
    if (!id) return;
    this.agents.add(id);
    for (const [wake, session] of [...this.waiters]) if (sameSession(id, session)) wake();
  }

  /**
   * The status the chip and the dock show; `session` adds that session's own view.
   * @param {string} [session] - as the browser names it
   * @returns {StatusAnswer}
   */
  status(session) {
    const { policy } = this.deps;
    const backup = this.deps.backup();
    const health = policy.snapshot();
    /** @type {StatusAnswer} */
    const out = {
      revision: this.revision,
      nowMs: clockNow(),
      chain: policy.resolved.chain.map(key),
      backup: backup ? key(backup) : null,
      recovery: policy.resolved.recovery,
      failureThreshold: policy.resolved.failureThreshold,
      channels: (health?.channels ?? []).map((h) => ({
        channel: key(h.channel), state: h.state, failures: h.failures, opens: h.opens ?? 0,
        openUntilMs: h.openUntilMs, lastCode: h.lastCode || undefined,
      })),
      // The slow-call breaker (policy/slow.go): each measured channel's state and time to first token.
      slow: (health?.slow ?? []).map((s) => ({ channel: key(s.channel), state: s.state, firstTokenMs: s.firstTokenMs, untilMs: s.untilMs })),
      lastDecision: this.lastDecision,
      moduleOk: health !== undefined,
      windows: Object.fromEntries(this.windows),
    };
    if (session) {
      // The module's word on the session (its `view`): where it runs, its
      // home, and where a failure would send it. It is told what it may not
      // know after a restart: the host's route for the session and what the
      // shell keeps of its home, pick, quota switch and pool.
      const { agent, session: id } = this.deps.quota ? webSession(this.deps.quota, session) : { agent: this.agentOf(session), session };
      const kept = this.deps.quota?.settings.get(id);
      const proposed = this.hostRoute(session);
      const view = policy.ask('view', {
        nowMs: out.nowMs, agent: agent ?? id,
        ...(proposed ? { proposed } : {}), ...(kept?.home ? { home: channelId(kept.home) } : {}), ...(kept?.pick ? { pick: channelId(kept.pick) } : {}),
        ...savedQuota(kept),
      });
      out.session = {
        id: session,
        route: view?.current ? key(view.current) : null,
        home: view?.home ? key(view.home) : null,
        next: view?.next ? { channel: key(view.next.channel), via: view.next.via } : null,
        avoided: view?.avoided === true,
        giveUp: view?.giveUp ? /** @type {GiveUpRecord} */ (forPage({ type: 'give-up', ...view.giveUp })) : null,
      };
      const quota = this.deps.quota && webView(this.deps.quota, session);
      if (quota) out.quota = quota; // only when the row configures quota rules: the menu shows its items then
    }
    return out;
  }

  /**
   * The agent id a session's requests came with in this process (the web UI's is the session id, prefixed).
   * @param {string} session
   */
  agentOf(session) {
    for (const agent of this.agents) if (sameSession(agent, session)) return agent;
    return undefined;
  }

  /**
   * The host's route for a session: the route its log's last request
   * header names, what the host proposes next. The module needs it only
   * for a session it has not met (after a restart, or once it forgot an
   * idle one); one it routed, it knows better.
   * @param {string} session
   * @returns {{provider: string, model: string} | undefined}
   */
  hostRoute(session) {
    const sessions = /** @type {SessionLog | undefined} */ (/** @type {unknown} */ (safe(() => this.ctx?.get?.('sessions'))));
    for (const f of sessionForms(session)) {
      const events = safe(() => sessions?.get(f)?.events, undefined);
      if (!events) continue;
      for (let i = events.length - 1; i >= 0; i--) {
        const c = events[i]?.type === 'request/header' ? events[i].data?.header?.config : undefined;
        if (typeof c?.provider === 'string' && typeof c?.model === 'string' && c.provider && c.model) return { provider: c.provider, model: c.model };
      }
    }
    return undefined;
  }

  /**
   * Answers at once when `since` is behind, else when something changes (or after the long-poll time).
   * @param {unknown} since - the revision the page has
   * @param {string | undefined} session
   * @param {AbortSignal} [signal]
   * @returns {Promise<StatusAnswer>}
   */
  async watch(since, session, signal) {
    if (Number.isInteger(since) && since === this.revision) {
      await new Promise(/** @param {(value?: unknown) => void} resolve */ (resolve) => {
        const done = () => { clearTimeout(timer); signal?.removeEventListener('abort', done); this.waiters.delete(done); resolve(); };
        const timer = setTimeout(done, LONG_POLL_MS);
        timer.unref?.();
        signal?.addEventListener('abort', done, { once: true });
        this.waiters.set(done, session);
      });
    }
    return this.status(session);
  }

  /**
   * What the picker may offer: the chain and every model the host's adapters
   * list, each checked with the host's model info. A model the host cannot
   * resolve would end the turn with UNKNOWN_MODEL, so it is left out.
   * @param {Llm | undefined} llm
   * @param {AbortSignal} [signal]
   * @returns {Promise<CandidatesAnswer>}
   */
  async candidates(llm, signal) {
    const { policy } = this.deps;
    /** @type {Map<string, Omit<Candidate, 'contextWindow'>>} */
    const seen = new Map();
    /**
     * @param {string} provider
     * @param {string} model
     * @param {Candidate['source']} source
     * @param {string} [name]
     */
    const add = (provider, model, source, name) => {
      const k = key({ provider, model });
      if (!seen.has(k) && seen.size < MAX_CANDIDATES) seen.set(k, { provider, model, channel: k, source, name });
    };
    for (const c of policy.resolved.chain) add(c.provider, c.model, 'chain');
    const backup = this.deps.backup();
    if (backup) add(backup.provider, backup.model, 'backup');
    if (llm) {
      for (const p of safe(() => llm.listProviders(), [])) {
        const models = await within(llm.listModels(p.id), MODEL_INFO_TIMEOUT_MS).catch(() => []);
        for (const m of models ?? []) add(p.id, m.id, 'adapter', m.name);
      }
    }
    const list = [...seen.values()];
    /** @type {({context?: {contextWindow?: unknown}} | false)[]} model info, or false when the host cannot resolve it */
    const known = await Promise.all(list.map((c) => (llm
      ? within(llm.resolveModelInfo(c.provider, c.model, signal), MODEL_INFO_TIMEOUT_MS).then((info) => info ?? {}, () => /** @type {const} */ (false))
      : Promise.resolve(/** @type {const} */ (false)))));
    /** @type {(i: number) => {contextWindow?: number}} */
    const windowOf = (i) => {
      const w = (known[i] || undefined)?.context?.contextWindow; // false: no model info
      return Number.isSafeInteger(w) && /** @type {number} */ (w) > 0 ? { contextWindow: /** @type {number} */ (w) } : {};
    };
    return {
      chain: policy.resolved.chain.map(key),
      backup: backup ? key(backup) : null,
      candidates: list.map((c, i) => ({ c, i })).filter(({ i }) => known[i])
        .map(({ c: { provider, model, channel, source, name }, i }) => ({ provider, model, channel, source, name, ...windowOf(i) })),
      unknown: list.filter((_, i) => !known[i]).map((c) => c.channel),
    };
  }

  /**
   * The session's own audit records (both generations), for the inline rows' details.
   * @param {string} session
   * @returns {Promise<RowsAnswer>}
   */
  async rows(session) {
    const { auditPath } = this.deps;
    /** @type {string[]} */
    const lines = [];
    for (const p of [`${auditPath}.1`, auditPath]) {
      const text = await readFile(p, 'utf8').catch(() => '');
      for (const line of text.split('\n')) if (line) lines.push(line);
    }
    /** @type {AuditRecord[]} */
    const out = [];
    /** @type {AuditRecord[]} */
    const opens = [];
    for (const line of lines) {
      /** @type {AuditRecord} */
      let r;
      try { r = forPage(JSON.parse(line)); } catch { continue; }
      if (r.type === 'circuit-open') opens.push(r);
      else if (ROW_TYPES.has(/** @type {string} */ (r.type)) && sameSession(/** @type {string} */ (r.agent), session)) out.push(r);
    }
    const channels = new Set(out.map((r) => r.from ?? r.channel));
    const relevant = opens.filter((r) => channels.has(r.channel));
    return {
      records: [...relevant, ...out].sort((a, b) => (/** @type {string} */ (a.at) < /** @type {string} */ (b.at) ? -1 : 1)).slice(-MAX_ROW_RECORDS),
      hedging: this.deps.policy?.hedging === true, // the module's word (WIT configured.hedging)
    };
  }

  /** A card section read against the row by the module (policy/card.go). @param {Record<string, unknown>} section */
  card(section) {
    return this.deps.policy.settingsCard(this.deps.rowPolicyConfig, section);
  }

  /**
   * The module's word on a section with the rest of the row; undefined when it takes it.
   * @param {Record<string, unknown>} section
   */
  problem(section) {
    try {
      const { problem } = this.card(section);
      return problem == null ? undefined : `dsh-resilience: ${problem}`;
    } catch (e) {
      return `dsh-resilience: ${String(e?.message ?? e).replace(/^settings-card: /, '')}`;
    }
  }

  /** The row's policy config with a section's tunable keys, as the module merges them. @param {Record<string, unknown>} section */
  merged(section) {
    return JSON.parse(this.card(section).configJson);
  }

  /**
   * Whether the host knows the session a browser names: one an agent of
   * this process runs or a setting was stored for, one live in the host's
   * session store, or one logged under its sessions directory.
   * @param {string} id
   */
  async knowsSession(id) {
    const quota = this.deps.quota;
    if (quota) {
      const { agent, session } = webSession(quota, id);
      if (agent !== undefined || quota.settings.get(session) !== undefined) return true;
    }
    return hostKnowsSession(id, { sessions: safe(() => this.ctx?.get?.('sessions')), sessionsDir: this.deps.sessionsDir });
  }

  /**
   * The RPC handler (`POST /dsh-resilience/<endpoint>`). Never throws. Every
   * field is checked here, where it enters, before anything is looked up or
   * written (rpc-input.js); a refusal quotes at most a short excerpt.
   * @param {() => Llm | undefined} getLlm
   * @returns {(endpoint: string, payload: unknown, signal?: AbortSignal) => Promise<RpcAnswer>}
   */
  handler(getLlm) {
    return async (endpoint, payload, signal) => {
      try {
        // Bounded in depth and size before anything walks it (rpc-input.js bodyProblem).
        const tooMuch = bodyProblem(payload);
        if (tooMuch) return refuse('INVALID', `dsh-resilience: ${tooMuch}`);
        // An early page brings the module up and waits for it.
        await (this.deps.whenUp ? this.deps.whenUp() : this.deps.policy?.ready);
        switch (endpoint) {
          case 'status': {
            const session = field(payload, 'session') ?? undefined;
            const problem = session === undefined ? undefined : sessionIdProblem(session);
            if (problem) return refuse('INVALID', `dsh-resilience: ${problem}`);
            return ok(await this.watch(field(payload, 'since'), /** @type {string | undefined} */ (session), signal)); // a session id, checked above
          }
          case 'candidates':
            return ok(await this.candidates(getLlm(), signal));
          case 'set-backup': {
            // Clearing is said in so many words: a channel missing, null or
            // hidden under `__proto__` is a malformed request, not "no backup".
            if (field(payload, 'clear') === true) {
              const message = await this.deps.setBackup(undefined, 'web');
              return message ? refuse('REFUSED', message) : ok(this.status());
            }
            const raw = field(payload, 'channel');
            if (raw === undefined || raw === null) return refuse('INVALID', 'dsh-resilience: no channel (send {clear: true} to clear the backup)');
            const channel = parseChannel(raw);
            if (!channel) return refuse('INVALID', `dsh-resilience: ${excerpt(raw)} is not provider/model`);
            const message = await this.deps.setBackup(channel, 'web');
            return message ? refuse('REFUSED', message) : ok(this.status());
          }
          case 'set-quota':
          case 'set-pool': {
            const session = field(payload, 'session');
            const problem = sessionIdProblem(session);
            if (problem || !this.deps.quota) return refuse('INVALID', `dsh-resilience: ${problem ?? 'no session'}`);
            const id = /** @type {string} */ (session); // a session id, checked above
            const value = field(payload, 'value');
            if (typeof value !== 'string' || value === '' || value.length > MAX_VALUE) {
              return refuse('INVALID', `dsh-resilience: ${excerpt(value)} is not a ${endpoint === 'set-quota' ? 'switch (on, off or default)' : 'pool name'}`);
            }
            if (!(await this.knowsSession(id))) return refuse('UNKNOWN_SESSION', `dsh-resilience: this host knows no session ${excerpt(id)}`);
            // The commands' own path (quota.js webChoose), so chip and typed command never disagree
            // and the session logs the choice (command/run) for the quotaRetry projection.
            const message = await webChoose(this.deps.quota, id, endpoint === 'set-quota' ? 'quota' : 'pool', value);
            return message ? refuse('REFUSED', message) : ok(this.status(id));
          }
          case 'rows': {
            const session = field(payload, 'session');
            const problem = sessionIdProblem(session);
            if (problem) return refuse('INVALID', `dsh-resilience: ${problem}`);
            return ok(await this.rows(/** @type {string} */ (session))); // a session id, checked above
          }
          case 'validate': {
            const section = field(payload, 'section') ?? {};
            if (typeof section !== 'object' || Array.isArray(section)) return refuse('INVALID', 'dsh-resilience: section must be an object');
            if (JSON.stringify(section).length > MAX_SECTION_BYTES) return refuse('INVALID', `dsh-resilience: section larger than ${MAX_SECTION_BYTES} bytes`);
            return ok(/** @satisfies {ValidateAnswer} */ ({ problem: this.problem(/** @type {Record<string, unknown>} */ (section)) ?? null }));
          }
          case 'report': { // report-command.js: the numbers, the text and the timeline of /resilience report
            const window = field(payload, 'window');
            if (window !== undefined && (typeof window !== 'string' || window.length > MAX_VALUE)) return refuse('INVALID', `dsh-resilience: ${excerpt(window)} is not a window`);
            const locale = field(payload, 'locale');
            if (locale !== undefined && (typeof locale !== 'string' || locale.length > 35)) return refuse('INVALID', `dsh-resilience: ${excerpt(locale)} is not a locale`);
            const { reportData } = await import('./report-command.js'); // loaded when asked, off the start-up path
            const out = await reportData(this.deps.auditPath, window, Date.now(), { locale });
            return out.error ? refuse('INVALID', out.error) : ok(/** @type {ReportAnswer} */ (out)); // no error: report, text and svg are all there
          }
          default:
            return refuse('UNKNOWN_ENDPOINT', `dsh-resilience: no endpoint ${excerpt(endpoint)}`);
        }
      } catch (e) {
        return refuse('INTERNAL', `dsh-resilience: ${String(e?.message ?? e).slice(0, 300)}`);
      }
    };
  }

  /**
   * Serves the RPC channel while the web connection exists, and the settings
   * namespace while a settings service exists; follows other plugins'
   * failovers for the return rows.
   * @param {Context} ctx
   * @param {(record: object) => void} report
   * @param {{warn: (...args: unknown[]) => void}} logger
   */
  install(ctx, report, logger) {
    this.ctx = ctx; // the host's session store is looked up through it (knowsSession)
    ctx.inject(['connection'], (sub) => {
      try {
        const dispose = /** @type {Context & WebServices} */ (sub).connection.rpc.handle(RPC_CHANNEL, this.handler(() => sub.get('llm')), { authority: 'loopback' });
        sub.effect(() => () => { dispose?.().catch?.(() => {}); });
      } catch (e) {
        logger.warn('dsh-resilience: the web channel is not served: %s', e?.message ?? e);
      }
    });
    ctx.inject(['settings'], async (sub) => {
      try {
        await this.serveSettings(/** @type {Context & WebServices} */ (sub), report);
      } catch (e) {
        logger.warn('dsh-resilience: the settings namespace is not served: %s', e?.message ?? e);
        report({ type: 'settings-not-served', reason: String(e?.message ?? e).slice(0, 300) });
      }
    });
    ctx.effect(() => () => { for (const wake of [...this.waiters.keys()]) wake(); });
  }

  /**
   * Registers the settings namespace at once, with the module's defaults as
   * generated at build time (policy-defaults.js): the card is there from
   * the host's boot, whether or not the module is up yet (a cold start
   * brings it up only behind the first request; a card registered after
   * the bring-up was missing from Settings → Plugins for 20-30 s after a
   * restart). What needs the module waits for it: a saved section applies
   * once it is up, and a check before then asks the user to try again.
   * @param {Context & Pick<WebServices, 'settings'>} sub - the settings service's fiber
   * @param {(record: object) => void} report
   * @param {any} [Schema] - the host's schemastery (tests pass it; the host's is imported otherwise)
   */
  async serveSettings(sub, report, Schema) {
    Schema ??= (await import('@deepseek-ai/schemastery')).default;
    const { policy, rowPolicyConfig } = this.deps;
    const defaults = CARD_DEFAULTS;
    // backoffMaxMs has no schema default: its default depends on persistent
    // (30 s, or 60 s as dsh-reconnect had), so a filled-in 30 s would pin a
    // persistent row turned on from the card to the plain cap. Unset, the
    // module picks the cap for the mode (policy/card.go reads it so too).
    const channel = Schema.object({ provider: Schema.string().required(), model: Schema.string().required() });
    const schema = Schema.object({
      failureThreshold: Schema.natural().default(defaults.failureThreshold).description('failures in one burst before a channel opens'),
      cooldownMs: Schema.natural().default(defaults.cooldownMs).description('how long an opened channel is avoided first'),
      backoffMaxMs: Schema.natural().description('cap of the same-channel backoff; unset: 30 s, 60 s with persistent'),
      recovery: Schema.union(['return', 'stay']).default(defaults.recovery).description('once the channel failed over from is healthy'),
      persistent: Schema.boolean().default(defaults.persistent).description('with nowhere else to go, retry until the turn is cancelled'),
      retryUnknown: Schema.boolean().default(defaults.retryUnknown).description('unknown failures retried like transient ones, with no cap of their own'),
      unknownMaxRetries: Schema.natural().default(defaults.unknownMaxRetries).description('with retryUnknown off: unknown failures in a row one model step retries'),
      chain: Schema.array(channel).default([]).description('failover order; the first is the primary'),
      // Only quota.defaultEnabled, merged into the row's quota object (merged()); no default: absent, the row's stands.
      quota: Schema.object({ defaultEnabled: Schema.boolean() }).description('retry on quota: whether a session\'s quota switch starts on'),
    });
    // The layer the user's values sit on, which is what the card's Reset
    // shows for a field: the row's value, else the module's default (the
    // card has no other way to know it while the user's value stands; without
    // it Reset showed an empty box and the save was refused). The wait stays
    // out: its default depends on persistent, and unset is what the module reads.
    /** @type {Record<string, unknown>} */
    const { backoffMaxMs: _wait, quota: _quota, ...fixed } = defaults;
    /** @type {Record<string, unknown>} */
    const base = { ...fixed, chain: [] };
    for (const k of CARD_KEYS) if (k !== 'quota' && rowPolicyConfig[k] !== undefined) base[k] = rowPolicyConfig[k];
    // Retry on quota as the row has it: on where the row's quota rules apply
    // (pools or a quota object not `active: false`) and its switch starts on.
    // A row without them shows it off and has no quota in its base, so an
    // untouched card adds no quota object (which would turn the rules on).
    const rowQuota = rowPolicyConfig.quota;
    if ((rowPolicyConfig.pools !== undefined || rowQuota !== undefined) && !(isObject(rowQuota) && rowQuota.active === false)) {
      base.quota = { defaultEnabled: isObject(rowQuota) && typeof rowQuota.defaultEnabled === 'boolean' ? rowQuota.defaultEnabled : defaults.quota.defaultEnabled };
    }
    /** @param {Record<string, unknown>} section */
    const apply = (section) => {
      if (!policy.up) return; // disposed, or the module did not come up: the host decides alone
      // The keys the section changes of what runs (a section that says the
      // same, the schema's defaults or the row's own values, changes nothing).
      const { changed: keys, configJson } = this.card(section);
      if (keys.length === 0) return;
      this.deps.applyConfig(JSON.parse(configJson));
      const record = { type: 'reconfigured', keys };
      report(record);
      this.decided(record);
    };
    /** @param {Record<string, unknown>} section */
    const tryApply = (section) => {
      try {
        apply(section);
      } catch (e) {
        report({ type: 'reconfigure-refused', reason: String(e?.message ?? e).slice(0, 300) });
      }
    };
    // The host validates the saved section as it registers: a section saved
    // by an earlier run was checked then, and applies (checked again by the
    // module's reconfigure) once the module is up.
    let registering = true;
    const scope = sub.settings.register(SETTINGS_NS, schema, {
      base,
      applies: 'live',
      validate: (value) => {
        if (!policy.up) {
          if (registering) return;
          this.deps.whenUp?.(); // the next save finds it up
          throw new Error('dsh-resilience is starting: save again in a moment');
        }
        // Bounded before anything walks it (a 50,000-deep chain overflowed the stack): rpc-input.js bodyProblem.
        const tooMuch = bodyProblem(value, { maxBytes: MAX_SECTION_BYTES, root: ['settings'] });
        const message = tooMuch ? `dsh-resilience: ${tooMuch}` : this.problem(value);
        if (message) throw new Error(message);
      },
    });
    registering = false;
    // A save made before the module is up applies once it is (the watcher reads the section then).
    sub.effect(() => scope.watch((value) => { this.settled().then((up) => up && tryApply(value)); }));
    // A section saved by an earlier run applies from the bring-up on (which
    // this does not start: a cold start keeps its own pace).
    this.settled().then((up) => up && tryApply(scope.get()));
  }

  /** Whether the module is up, once its bring-up settled (false when it failed or the plugin ended); never kicks it. */
  settled() {
    return this.deps.upSettled ? this.deps.upSettled().catch(() => false) : Promise.resolve(this.deps.policy.up);
  }
}

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
function isObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * `provider/model` or an own `{provider, model}`, each bounded; false when malformed.
 * @param {unknown} v
 * @returns {Channel | false}
 */
function parseChannel(v) {
  /**
   * @param {unknown} x
   * @returns {x is string}
   */
  const part = (x) => typeof x === 'string' && x !== '' && x.length <= MAX_CHANNEL;
  if (typeof v === 'object' && v !== null) {
    const provider = field(v, 'provider');
    const model = field(v, 'model');
    return part(provider) && part(model) ? { provider, model } : false;
  }
  if (typeof v !== 'string' || v.length > MAX_CHANNEL) return false;
  return textChannel(v) ?? false;
}

/**
 * f's value, or the fallback when it throws or answers nothing.
 * @template T
 * @param {() => T} f
 * @param {T} [fallback]
 * @returns {T}
 */
function safe(f, fallback) {
  try {
    return /** @type {T} */ (f() ?? fallback); // no fallback: undefined, as f may answer
  } catch {
    return /** @type {T} */ (fallback);
  }
}

/**
 * The promise's outcome, or a rejection after ms.
 * @template T
 * @param {T | Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T>}
 */
function within(promise, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  return Promise.race([
    Promise.resolve(promise),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error('timed out')), ms); timer.unref?.(); }),
  ]).finally(() => clearTimeout(timer));
}
