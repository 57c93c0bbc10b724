// @ts-check
// The plugin's life in this process: the module's compile, its bring-up
// (at once, or behind the first request on a cold start: cold-start.js),
// what follows behind it (the health refresh, shared health, the probes),
// and its end. Whatever needs the module waits here (`whenUp` starts the
// bring-up, `upSettled` does not), and `end` settles everything it began,
// so nothing waits on a bring-up past `stop`: a pending one once held a
// headless run 5 s past its answer, until the host forced the exit.
import { join } from 'node:path';
import { channelId } from './channel.js';
import { coldStartLikely } from './cold-start.js';

/** @import { ColdStart } from './cold-start.js' */
import { ConfigError } from './engine.js';
import { contextTokensOf, requestEvent, wakeEvent } from './events.js';
import { DEFAULT_REFRESH_MS } from './health.js';
import { resolveSecret } from './secret.js';

/** @import { Channel, Event } from './policy-types.js' */

// A cold start brings the module up this long after the host's boot if no
// request came first: a headless run's first request follows its boot by
// well under this, an interactive one waits on the user.
const COLD_START_MS = 1_000;
// ... and this long after a request sent cold: the host writes the request
// a few turns of the event loop after its listener returns, and the
// bring-up holds the main thread for ~30 ms (kicked on the next tick, it
// went first and the request waited as before). A failure kicks at once.
const COLD_KICK_MS = 100;
/** Why a bring-up kicked after the plugin ended does not run. */
export const DISPOSED = new Error('dsh-resilience was disposed before its bring-up');

/**
 * What the bring-up and what follows it need.
 * @typedef {object} BringUpDeps
 * @property {import("@deepseek-ai/cordis").Context} ctx
 * @property {import('./engine.js').Engine} engine
 * @property {(event: Event) => any} step
 * @property {(record: object) => void} report
 * @property {{warn: Function}} logger
 * @property {Promise<[string | undefined, Channel | undefined, ...unknown[]]>} facts - the health file's text, the backup, and the sessions' settings read.
 * @property {import('./health.js').HealthStore} health
 * @property {import('./quota.js').QuotaRules} quota
 * @property {import('./shell.js').Shell} shell
 * @property {ColdStart} coldStart - the last process's word on a cold start (cold-start.json).
 * @property {{redis?: any}} sharedConfig
 * @property {any} [sharedRedis] - shared-redis.js, when configured.
 * @property {any} [createRedisClient]
 * @property {number} [refreshMs]
 * @property {() => Promise<unknown>} booted - the host's loader settled.
 */

export class Lifetime {
  /**
   * Starts the compile: at once, or, when the last process left word that
   * this one may start cold, at the kick (nothing needs the module before
   * the bring-up then, and reading and compiling it cost 7 ms of the main
   * thread ahead of the first request, measured in the start-up bench's
   * profiles). A kick that only settles a disposed plugin's bring-up compiles nothing.
   * @param {object} o
   * @param {string} o.stateDir
   * @param {string} o.configJson - the policy config as the module is given it.
   * @param {WebAssembly.Module | Promise<WebAssembly.Module>} [o.compiled] - a test's module.
   * @param {() => Promise<WebAssembly.Module>} o.compile
   */
  constructor({ stateDir, configJson, compiled, compile }) {
    this.controller = new AbortController();
    this.signal = this.controller.signal;
    this.stateDir = stateDir;
    this.kicked = false;
    /** @type {() => void} */
    this.kick = () => {};
    const kickedOff = new Promise((resolve) => { this.kick = () => { this.kicked = true; resolve(undefined); }; });
    this.kickedOff = kickedOff;
    this.compiling = compiled ?? (coldStartLikely(join(stateDir, 'cold-start.json'), configJson)
      ? kickedOff.then(() => (this.signal.aborted ? Promise.reject(DISPOSED) : compile()))
      : compile());
    Promise.resolve(this.compiling).catch(() => {}); // a module that cannot load is reported by the bring-up
    /** @type {{coldStart?: NodeJS.Timeout, coldKick?: NodeJS.Timeout, refresh?: NodeJS.Timeout}} */
    this.timers = {};
    /** @type {Array<{payload: any, proposed: Channel, tokens: number | undefined, sentAt: string}>} requests sent cold, told once the engine is up */
    this.sentCold = [];
    /** @type {Promise<void>} */
    this.up = Promise.reject(new Error('not begun'));
    this.up.catch(() => {});
    /** @type {Promise<boolean>} */
    this.coldAllowed = Promise.resolve(false);
    /** @type {BringUpDeps | undefined} */
    this.deps = undefined;
    /** @type {any} SharedHealth, when Redis is configured */
    this.shared = undefined;
  }

  /** What begin() was given. */
  get d() {
    if (!this.deps) throw new Error('dsh-resilience: the bring-up has not begun');
    return this.deps;
  }

  /**
   * Reads what earlier runs left and brings the module up when kicked; then,
   * behind the first request, what other processes learnt.
   * @param {BringUpDeps} d
   */
  begin(d) {
    this.deps = d;
    const { engine, report, facts } = d;
    // At once, unless the last process's module allowed a cold start; then
    // behind the first request sent cold, or when anything needs the engine,
    // or a moment after the host's boot, whichever comes first.
    this.coldAllowed = d.coldStart.allows(engine.configJson);
    this.coldAllowed.then((ok) => { if (!ok) this.kick(); });
    // A first run's word holds for a row the module accepts: it checks the row now.
    if (d.coldStart.firstRun) engine.validate().catch(() => {});
    this.up = this.kickedOff.then(async () => {
      if (this.signal.aborted) throw DISPOSED;
      const [text, backup] = await facts;
      const restored = await engine.start({ health: text, backup });
      const r = engine.resolved;
      report({ type: 'boot', pid: process.pid, chain: r.chain.map(channelId), toolRetry: r.tools?.retry,
        pools: r.pools.map((p) => p.name), balances: r.quota.balances.map((b) => b.provider),
        ...(d.sharedConfig.redis ? { shared: 'redis' } : {}) });
      if (restored?.adopted) report({ type: 'health-merged', adopted: restored.adopted, of: restored.channels });
      this.tellSentCold(); // before any other step: a failure of one is decided knowing it was sent
      // Once: exhaustion marks an older version kept in quota-marks.json now live in health
      // (only a config with the quota rules folds them: migrate-marks.js).
      if (r.quota?.active === true) {
        const { migrateMarks } = await import('./migrate-marks.js');
        if (await migrateMarks(join(this.stateDir, 'quota-marks.json'), engine, report)) d.shell.healthChanged();
      }
    });
    this.up.catch((e) => {
      if (e === DISPOSED) return; // kicked after the plugin ended: nothing is written after `stop`
      d.logger.warn('dsh-resilience: the policy module did not come up; the host decides alone: %s', e?.message ?? e);
      report({ type: 'module-failure', what: 'bring-up', error: e?.name ?? 'Error', message: String(e?.message ?? e).slice(0, 500) });
    });
    this.behind = this.up.then(() => this.follow());
    this.behind.catch(() => {});
    // A cold start with no request soon after the boot (an interactive
    // session) comes up anyway: commands, the web view and probes want it.
    this.coldAllowed.then((ok) => ok && d.booted()).then(() => {
      if (this.kicked || this.signal.aborted) return;
      this.timers.coldStart = setTimeout(this.kick, COLD_START_MS);
      this.timers.coldStart.unref?.();
    });
  }

  /**
   * Behind the first request: the file's refresh (it sets a refused file
   * aside and audits skipped records) and its refresher, other hosts'
   * records, then the probes all of that calls for (after them: a host acts
   * on what the others say, not on its file alone). The refresher is armed
   * before shared health starts, whatever that start does: the file is how
   * the processes of one home hear each other, Redis or not (armed after it,
   * a Redis URL the client could not parse left it off, and another
   * process's trip reached this one only at its stop).
   */
  async follow() {
    const { d } = this;
    const { engine, health, report, shell, step } = d;
    if (this.signal.aborted) return;
    await health.refresh(); // what other host processes learnt since
    if (this.signal.aborted) return;
    this.timers.refresh = setInterval(() => { health.refresh().then(() => step(wakeEvent())); }, d.refreshMs ?? DEFAULT_REFRESH_MS);
    this.timers.refresh.unref?.();
    if (d.sharedConfig.redis && d.sharedRedis) {
      this.shared = new d.sharedRedis.SharedHealth({
        options: d.sharedConfig.redis,
        createClient: d.createRedisClient,
        password: async () => (d.sharedConfig.redis.passwordEnv ? resolveSecret(d.ctx, d.sharedConfig.redis.passwordEnv) : undefined),
        due: (/** @type {boolean} */ forget) => engine.sharedWrites(forget),
        written: (/** @type {any[]} */ records) => engine.sharedWritten(records),
        merge: (/** @type {any[]} */ records, /** @type {boolean} */ live) => {
          if (this.signal.aborted) return;
          let result;
          try {
            result = engine.restore(JSON.stringify({ channels: records }), undefined, { live, fromShared: true }); // past the prune horizon: not taken
          } catch {
            return; // a refused batch: nothing taken (a trap is logged by the engine)
          }
          if (result.adopted === 0) return;
          report({ type: 'shared-merged', adopted: result.adopted, of: result.channels });
          shell.healthChanged(); // the local file keeps what Redis said
          step(wakeEvent()); // a reopened channel may want its probe
        },
        audit: report,
      });
      shell.shared = this.shared;
      try {
        if (!this.signal.aborted) {
          await this.shared.start();
          this.shared.sync(); // what this host knows that Redis may not
        }
      } catch (e) {
        // Shared health is an addition: a start that fails leaves this host on its file, said once.
        const shared = this.shared;
        shell.shared = this.shared = undefined;
        await shared.close(0).catch(() => {});
        if (!shared.outage) {
          report({ type: 'shared-unavailable', store: 'redis',
            reason: `shared health did not start (${String(e?.message ?? e).slice(0, 120)}); health is shared through the local file only` });
        }
      }
    }
    step(wakeEvent()); // schedule (or send at once) the probes that knowledge calls for
  }

  /** Whether the engine answers, once its bring-up settled; a bad config ends the turn naming its key, anything else fails open. */
  upSettled() {
    return this.up.then(() => this.d.engine.up, (e) => {
      if (e instanceof ConfigError) throw e;
      return false;
    });
  }

  /** The same for what needs the engine now: its bring-up starts if it has not. */
  whenUp() {
    this.kick();
    return this.upSettled();
  }

  /**
   * The cold start, for one request before the engine is up: whether it
   * goes as proposed now. Only when the last process's module allowed it
   * and the module would be told nothing of this session first (no home or
   * pick saved: quota.js agentEvents); the bring-up then follows at once.
   * @param {any} payload
   * @param {Channel} proposed
   */
  async sendCold(payload, proposed) {
    if (!(await this.coldAllowed)) return false;
    const { engine, quota, facts, ctx, coldStart } = this.d;
    // A row the module refuses is never sent with: the bring-up then ends the turn, naming the key.
    if (coldStart.firstRun && !(await engine.validate().then(() => true, () => false))) return false;
    await facts.catch(() => {}); // the sessions' saved settings, read
    const session = payload.agent?.session?.id;
    if (engine.up || (session && quota.agentEvents(String(payload.agent?.id ?? 'unknown'), String(session), false).length > 0)) return false;
    this.sentCold.push({ payload, proposed, tokens: contextTokensOf(ctx, payload.agent), sentAt: new Date().toISOString() });
    this.timers.coldKick ??= setTimeout(this.kick, COLD_KICK_MS);
    this.timers.coldKick.unref?.();
    return true;
  }

  /** Tells the engine of the requests sent cold; a pass it would not have made is audited. */
  tellSentCold() {
    const { quota, step, report } = this.d;
    for (const { payload, proposed, tokens, sentAt } of this.sentCold.splice(0)) {
      const agent = String(payload.agent?.id ?? 'unknown');
      quota.track(payload.agent); // as onRequest does
      const verdict = step(requestEvent(payload, proposed, tokens))?.verdict;
      report({ type: 'cold-pass', agent, channel: channelId(proposed), sentAt }); // `at` is when the module was told
      if (verdict?.kind === 'swap') report({ type: 'cold-pass-missed', agent, channel: channelId(verdict) });
    }
  }

  /**
   * Ends the life: nothing is started after this. A bring-up under way
   * ends first (nothing it starts outlives `stop`); one not begun is settled
   * as disposed without a compile, so whatever waits on it returns now.
   */
  async end() {
    this.controller.abort(new Error('dsh-resilience disposed'));
    clearTimeout(this.timers.coldStart);
    clearTimeout(this.timers.coldKick);
    this.kick();
    await this.up.catch(() => {});
    clearInterval(this.timers.refresh); // follow() checks the signal before it arms anything
  }

  /** A first run whose module checked the row but never came up: its word is not on disk yet. */
  firstWordUnsaid() {
    const { engine, coldStart } = this.d;
    return !engine.up && coldStart.firstRun && engine.configured !== undefined;
  }

  /** Whether the module's word on a cold start differs from the file's (then the last save writes it). */
  coldWordChanged() {
    const { engine, coldStart } = this.d;
    return engine.up && coldStart.differs(engine.configJson, engine.snapshot()?.coldPass === true);
  }
}
