// @ts-check
// dsh-resilience: the Cordis plugin that carries the policy module into the
// DSH host. This file is the composition root: it builds the engine (the
// module's whole life, engine.js), the stores and the effect subscribers,
// and wires the host's events, commands and services to the engine. It holds
// no decision state of its own: that is the module's.
//
// Start-up: `apply` registers everything and returns; the module is compiled
// and brought up behind it, off the host's boot.
// The first model request awaits only the bring-up (config, health, backup,
// session settings); Redis, the health refresh, model info and the probes
// follow behind it.
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditLog } from './audit.js';
import { tapAudit } from './audit-tap.js';
import { loadBackup, saveBackup } from './backup.js';
import { installCommands, migrateText, renderTable } from './command.js';
import { emitCompat } from './compat-events.js';
import { Turns } from './turns.js';
import { makeNotice } from './notice.js';
import { deliver, EVENTS } from './effects.js';
import { channelId } from './channel.js';
import { auditSubscriber } from './effect-audit.js';
import { eventSubscriber } from './effect-events.js';
import { shellSubscriber } from './effect-shell.js';
import { contextTokensOf, disposedEvent, modelInfoEvent, probeResultEvent, requestEvent, setBackupEvent, settledEvent, wakeEvent } from './events.js';
import { DEFAULT_PRUNE_MS, DEFAULT_REFRESH_MS, HealthStore } from './health.js';
import { compileModule, ConfigError, configText, Engine } from './engine.js';
import { ColdStart, coldStartLikely } from './cold-start.js';
import { checkNotify, Notifier } from './notify.js';
import { runProbe } from './probe.js';
import { installSkill } from './skill.js';
import { routeAuxCalls } from './aux-route.js';
import { checkShared } from './shared-config.js';
import { QuotaRules } from './quota.js';
import { requestListeners } from './requests.js';
import { dshHome, resolveStateDir, splitConfig } from './row.js';
import { resolveSecret } from './secret.js';
import { watchStalls } from './stall.js';
import { later } from './timers.js';
import { telemetrySink } from './telemetry.js';
import { toolRetryListener } from './tools.js';
import { Waits } from './wait.js';
import { WebHalf } from './web.js';
import { now as clockNow } from './clock.js';

export { resolveStateDir };
export const name = 'dsh-resilience';
// Nothing is required: llm (probes, model info) and commands are used when present.
export const inject = [];

/** How long the host's routes must be quiet before the targets are checked again. */
const ADAPTERS_SETTLE_MS = 250;
// A cold start (cold-start.js) brings the module up this long after the
// host's boot if no request came first: a headless run's first request
// follows its boot by well under this, an interactive one waits on the user.
const COLD_START_MS = 1_000;
// ... and this long after a request sent cold.
const COLD_KICK_MS = 100;
/** Why a bring-up kicked after the plugin ended does not run. */
const DISPOSED = new Error('dsh-resilience was disposed before its bring-up');

/**
 * @param {import("@deepseek-ai/cordis").Context} ctx
 * @param {object} [config]
 * @param {object} [seams] - for tests; the host passes none.
 * @param {WebAssembly.Module | Promise<WebAssembly.Module>} [seams.compiled] - another module.
 * @param {() => Promise<WebAssembly.Module>} [seams.compile] - how the module is compiled when
 *   `compiled` is not given (engine.js compileModule).
 * @param {(parts: {engine: Engine, up: Promise<void>, reconfigure: (config: object) => void, health: HealthStore}) => void} [seams.expose]
 *   receives the engine, its bring-up, the settings card's path and the health
 *   store (apply itself returns nothing: Cordis takes a returned value as an effect).
 */
export async function apply(ctx, config = {}, { compiled, compile = compileModule, expose } = {}) {
  const { shim, policy: policyConfig } = splitConfig(config ?? {});
  if (shim.enabled === false) { // off.js: no module, no hooks, no files
    (await import('./off.js')).applyOff(ctx);
    return;
  }
  const stateDir = resolveStateDir(shim.stateDir);
  const lifetime = new AbortController();
  // The bring-up starts when kicked (below). Defined first: the compile may wait for it.
  let kicked = false;
  /** @type {() => void} */
  let kick = () => {};
  const kickedOff = new Promise((resolve) => { kick = () => { kicked = true; resolve(undefined); }; });
  // The compile overlaps the rest of activation and the host's boot
  // (engine.js), unless the last process left word that this one may start
  // cold: then nothing needs the module before the bring-up, and reading and
  // compiling it (7 ms of the main thread, measured in the start-up bench's
  // profiles) waits for the kick instead of delaying the first request.
  // A kick that only settles a disposed plugin's bring-up compiles nothing.
  const compiling = compiled ?? (coldStartLikely(join(stateDir, 'cold-start.json'), configText(policyConfig))
    ? kickedOff.then(() => (lifetime.signal.aborted ? Promise.reject(DISPOSED) : compile()))
    : compile());
  Promise.resolve(compiling).catch(() => {}); // a module that cannot load is reported by the bring-up
  const sharedConfig = shim.shared ? checkShared(shim.shared) : {};
  // Loaded only when configured, so the default install needs no client; a
  // missing client stops activation with the key and how to add it.
  // The Redis half itself is loaded only then too, off the default start-up path.
  const sharedRedis = sharedConfig.redis ? await import('./shared-redis.js') : undefined;
  const createRedisClient = sharedRedis ? await sharedRedis.loadRedisClient() : undefined;
  const logger = ctx.logger('dsh-resilience');
  const backupFile = join(stateDir, 'backup.json');
  let backup; // shown by /resilience; the module decides with it
  // The web client's host half (web.js): it follows the module's effects, so
  // the page follows decisions live.
  const web = new WebHalf({
    auditPath: join(stateDir, 'audit.jsonl'),
    rowPolicyConfig: policyConfig,
    backup: () => backup,
    setBackup: (channel, source) => setBackup(channel, source),
    applyConfig: (next) => applyConfig(next),
    sessionsDir: join(dshHome(), 'sessions'),
    whenUp: () => whenUp(),
    upSettled: () => upSettled(),
  });
  // The host's telemetry seam and the webhooks follow the audit records (telemetry.js, notify.js).
  const notifier = new Notifier({ targets: checkNotify(shim.notify ?? []), report: (r) => audit.write(r), secret: (ref) => resolveSecret(ctx, ref) });
  // The page answers its long poll on every record too (a setting, a merged health): it reads none.
  const audit = tapAudit(new AuditLog(join(stateDir, 'audit.jsonl')), [() => web.changed(), telemetrySink(ctx), (r) => notifier.observe(r)]);
  const report = (record) => audit.write(record);
  const engine = new Engine(compiling, policyConfig, logger, report, report);
  web.deps.policy = engine;
  const waits = new Waits();
  const pruneMs = shim.healthPruneMs ?? DEFAULT_PRUNE_MS;
  const coldStart = new ColdStart(join(stateDir, 'cold-start.json'), report);
  const health = new HealthStore(join(stateDir, 'health.json'), engine, report,
    { pruneMs, saved: (coldPass) => coldStart.note(engine.configJson, coldPass) });
  const probes = new Set();
  /** @type {{wake?: {clear: () => void, unref: () => any}, save?: NodeJS.Timeout, describe?: NodeJS.Timeout, refresh?: NodeJS.Timeout, coldStart?: NodeJS.Timeout, coldKick?: NodeJS.Timeout}} */
  const timers = {};
  let dirty = false; // health changed since the last save was started
  let shared; // SharedHealth, when shared.redis is configured
  const step = (event) => (lifetime.signal.aborted ? undefined : engine.step(event));

  const emit = (event, payload) => {
    try {
      ctx.emit(event, payload);
    } catch (e) {
      logger.warn('a %s listener failed: %s', event, e?.message ?? e);
    }
  };

  // The module ends a held wait early (effect wait-cut) when a channel the
  // agent may use is back: each sleeping wait registers its cut here.
  const cuts = new Map(); // agent id -> AbortController of its wait
  const turns = new Turns();
  // The quota rules' shell (quota.js): per-session settings, long-term waits, balance scripts.
  const quota = new QuotaRules({ ctx, policy: engine, decide: step, settingsPath: join(stateDir, 'quota-sessions.json'),
    report, emit, lifetime: lifetime.signal });
  web.deps.quota = quota;

  // What this process does when the module asks (effect-shell.js).
  const shell = {
    cutWait(agent) {
      cuts.get(agent)?.abort(new Error('a channel is usable again'));
    },
    scheduleWake(atMs) {
      timers.wake?.clear();
      timers.wake = undefined;
      if (atMs > 0 && !lifetime.signal.aborted) {
        // later() waits out any delay in slices Node accepts: a wake years
        // away (a restored record, a provider's Retry-After) must not spin.
        const wake = later(() => { timers.wake = undefined; step(wakeEvent()); }, atMs - clockNow());
        wake.unref();
        timers.wake = wake; // a pending probe time never keeps a finished host alive
      }
    },
    probe(channel) {
      if (lifetime.signal.aborted) return; // disposed: no request leaves after `stop`
      const started = Date.now();
      const llm = ctx.get('llm');
      const settle = (ev) => {
        if (lifetime.signal.aborted) return;
        const record = { type: 'probe-result', channel: channelId(channel), ok: ev.ok, code: ev.failure?.code, ms: Date.now() - started };
        report(record);
        web.decided(record);
        const probed = { channel, ok: ev.ok, code: ev.failure?.code, message: ev.failure?.message, ms: Date.now() - started };
        emit(EVENTS.probe, probed);
        emitCompat(ctx, EVENTS.probe, probed, logger);
        step(ev);
      };
      if (!llm) {
        settle(probeResultEvent(channel, { code: 'ABORTED', message: 'no llm service to probe with' }));
        return;
      }
      const running = runProbe(llm, channel, lifetime.signal, engine.resolved?.probeMaxTokens).then(settle);
      probes.add(running);
      running.finally(() => probes.delete(running));
    },
    healthChanged() {
      dirty = true;
      if (lifetime.signal.aborted) return; // the disposer saves once, last
      timers.save ??= setTimeout(() => { timers.save = undefined; dirty = false; health.save(); shared?.sync(); }, 50);
    },
  };
  // Effects are the only way out of the module: each goes, in order, to these
  // subscribers (effects.js).
  const subscribers = [
    { role: 'web view', view: true, effect: (fx) => web.effect(fx) },
    { role: 'shell', effect: shellSubscriber(shell) },
    { role: 'quota shell', effect: (fx) => quota.effect(fx) },
    { role: 'audit log', effect: auditSubscriber({ audit, logger, where: (agent) => turns.of(agent), maxFailovers: () => engine.resolved?.maxFailovers,
      notice: makeNotice({ enabled: shim.notice !== false, headless: () => ctx.get('headlessStartup') !== undefined, write: (l) => process.stderr.write(l) }) }) },
    { role: 'Cordis events', effect: eventSubscriber(ctx, logger) },
  ];
  engine.subscribe((out) => deliver(out.effects, subscribers, logger));

  // ---- bring-up, off the host's boot
  // What the first request needs: the engine up with what earlier runs left
  // (health, backup) and the sessions' settings loaded. The files are read at
  // once, in parallel with the module's compile; no lock is taken before the
  // first request.
  // The plugin's files name the user's providers and usage: theirs only. An
  // existing directory of the default name is tightened too (older versions
  // made it 0755); a configured one is only created so.
  const dir = mkdir(stateDir, { recursive: true, mode: 0o700 }).catch(() => {})
    .then(() => (shim.stateDir === undefined ? chmod(stateDir, 0o700).catch(() => {}) : undefined));
  const facts = Promise.all([health.peek(), loadBackup(backupFile, report), quota.settings.load(), dir]);
  facts.catch(() => {}); // the bring-up reports it
  // The bring-up itself starts when kicked: at once, unless the last
  // process's module allowed a cold start (cold-start.js); then behind the
  // first request sent cold, or when anything needs the engine, or a moment
  // after the host's boot, whichever comes first.
  const coldAllowed = coldStart.allows(engine.configJson);
  coldAllowed.then((ok) => { if (!ok) kick(); });
  /** @type {Array<{payload: any, proposed: any, tokens: number | undefined}>} requests sent cold, told once the engine is up */
  const sentCold = [];
  const up = kickedOff.then(async () => {
    if (lifetime.signal.aborted) throw DISPOSED;
    const [text, saved] = await facts;
    backup = saved;
    const restored = await engine.start({ health: text, backup });
    report({ type: 'boot', pid: process.pid, chain: engine.resolved.chain.map(channelId), toolRetry: engine.resolved.tools?.retry,
      pools: engine.resolved.pools.map((p) => p.name), balances: engine.resolved.quota.balances.map((b) => b.provider),
      ...(sharedConfig.redis ? { shared: 'redis' } : {}) });
    if (restored?.adopted) report({ type: 'health-merged', adopted: restored.adopted, of: restored.channels });
    tellSentCold(); // before any other step: a failure of one is decided knowing it was sent
    // Once: exhaustion marks an older version kept in quota-marks.json now live in health
    // (only a config with the quota rules folds them: migrate-marks.js).
    if (engine.resolved.quota?.active === true) {
      const { migrateMarks } = await import('./migrate-marks.js');
      if (await migrateMarks(join(stateDir, 'quota-marks.json'), engine, report)) shell.healthChanged();
    }
  });
  /** Whether the engine answers, once its bring-up settled; a bad config ends the turn naming its key, anything else fails open. */
  const upSettled = () => up.then(() => engine.up, (e) => {
    if (e instanceof ConfigError) throw e;
    return false;
  });
  /** The same for what needs the engine now: its bring-up starts if it has not. */
  const whenUp = () => {
    kick();
    return upSettled();
  };

  /**
   * The cold start, for one request before the engine is up: whether it
   * goes as proposed now. Only when the last process's module allowed it
   * and the module would be told nothing of this session first (no home or
   * pick saved: quota.js agentEvents); the bring-up then follows at once.
   */
  async function sendCold(payload, proposed) {
    if (!(await coldAllowed)) return false;
    await facts.catch(() => {}); // the sessions' saved settings, read
    const session = payload.agent?.session?.id;
    if (engine.up || (session && quota.agentEvents(String(payload.agent?.id ?? 'unknown'), String(session), false).length > 0)) return false;
    sentCold.push({ payload, proposed, tokens: contextTokensOf(ctx, payload.agent) });
    // Once this request is on the wire: the host writes it a few turns of
    // the event loop after this returns, and the bring-up holds the main
    // thread for ~30 ms (kicked on the next tick, it went first and the
    // request waited as before). A failure kicks at once (whenUp).
    timers.coldKick ??= setTimeout(kick, COLD_KICK_MS);
    timers.coldKick.unref?.();
    return true;
  }

  /** Tells the engine of the requests sent cold; a pass it would not have made is audited. */
  function tellSentCold() {
    for (const { payload, proposed, tokens } of sentCold.splice(0)) {
      const agent = String(payload.agent?.id ?? 'unknown');
      quota.track(payload.agent); // as onRequest does
      const verdict = step(requestEvent(payload, proposed, tokens))?.verdict;
      report({ type: 'cold-pass', agent, channel: channelId(proposed) });
      if (verdict?.kind === 'swap') report({ type: 'cold-pass-missed', agent, channel: channelId(proposed), module: channelId(verdict) });
    }
  }
  // Behind the first request: the file's refresh (it sets a refused file
  // aside and audits skipped records), other hosts' records, then the probes
  // all of that calls for (after them: a host acts on what the others say,
  // not on its file alone), the refresher.
  const behind = up.then(async () => {
    if (lifetime.signal.aborted) return;
    await health.refresh(); // what other host processes learnt since
    shared = sharedConfig.redis && sharedRedis && new sharedRedis.SharedHealth({
      options: sharedConfig.redis,
      createClient: createRedisClient,
      // @ts-expect-error -- called only when sharedConfig.redis is set (the `&&` above); the checker loses that in the closure
      password: async () => (sharedConfig.redis.passwordEnv ? resolveSecret(ctx, sharedConfig.redis.passwordEnv) : undefined),
      snapshot: () => engine.snapshot(),
      merge: (records, live) => {
        if (lifetime.signal.aborted) return;
        let result;
        try {
          result = engine.restore(JSON.stringify({ channels: health.prune(records) }), undefined, { live });
        } catch {
          return; // a refused batch: nothing taken (a trap is logged by the engine)
        }
        if (result.adopted === 0) return;
        report({ type: 'shared-merged', adopted: result.adopted, of: result.channels });
        shell.healthChanged(); // the local file keeps what Redis said
        step(wakeEvent()); // a reopened channel may want its probe
      },
      audit: report,
      pruneMs,
    });
    if (shared && !lifetime.signal.aborted) {
      await shared.start();
      shared.sync(); // what this host knows that Redis may not
    }
    step(wakeEvent()); // schedule (or send at once) the probes that knowledge calls for
    if (lifetime.signal.aborted) return;
    const refresh = setInterval(() => {
      health.refresh().then(() => step(wakeEvent()));
    }, shim.healthRefreshMs ?? DEFAULT_REFRESH_MS);
    refresh.unref?.();
    timers.refresh = refresh;
  });
  up.catch((e) => {
    if (e === DISPOSED) return; // kicked after the plugin ended: nothing is written after `stop`
    logger.warn('dsh-resilience: the policy module did not come up; the host decides alone: %s', e?.message ?? e);
    report({ type: 'module-failure', what: 'bring-up', error: e?.name ?? 'Error', message: String(e?.message ?? e).slice(0, 500) });
  });
  behind.catch(() => {});

  // ---- adapters: they talk only to the engine
  const { onRequest, onRequestError } = requestListeners({ ctx, engine, whenUp, sendCold, quota, web, turns, waits, cuts });
  ctx.on('agent/request', onRequest, true);
  ctx.on('agent/request-error', onRequestError, true);
  ctx.on('agent/status', ({ agent, status }) => {
    if (status === 'idle') step(settledEvent(agent));
  });
  ctx.on('agent/disposed', ({ agent }) => {
    step(disposedEvent(agent));
    quota.forget(agent);
  });

  // Tool calls the operator declared safe to repeat (tools.js). Prepended, so
  // the first attempt runs under every other wrapper, the host's timeout
  // policy included; each repeat runs under a deadline of its own.
  ctx.on('tools/execute', toolRetryListener({
    decide: (event) => step(event)?.verdict,
    waits,
    lifetime: lifetime.signal,
    declaredTimeout: (tool, agent) => ctx.get('tools')?.get(tool, agent)?.timeoutMs,
    fail: (e, what) => engine.fail(e, what),
  }), true);

  // Every streaming model call, the auxiliary ones included, under a silence
  // watchdog (stall.js): a stalled one is cut and fails as a TIMEOUT.
  // Neither waits for the host's llm package (host-llm.js, afterHostLlm).
  // A stream opened before the module is up (a request sent cold) is watched once it is.
  watchStalls(ctx, (event) => step(event)?.verdict, () => (engine.up || lifetime.signal.aborted ? undefined : upSettled().catch(() => false)));
  // Compaction and session-title calls off an open channel (aux-route.js).
  // Registered after the watchdog and prepended, so it runs first and the
  // copy it sends is watched like any call.
  routeAuxCalls(ctx, (event) => step(event)?.verdict, report);

  // What the host knows of the models the plugin may swap to decides whether
  // a reasoning effort survives the swap.
  // A target the host cannot route (no adapter, a model the route does not
  // list) is never failed over to: the module hears the host's code.
  // Its window too (`context.contextWindow`): a target too small for a
  // request's context is skipped for it (policy/fit.go).
  const describe = (llm, target) => {
    const channel = { provider: target.provider, model: target.model }; // a chain entry may carry its own settings
    return llm.resolveModelInfo(channel.provider, channel.model, lifetime.signal).then(
      (info) => {
        const contextWindow = info?.context?.contextWindow;
        web.window?.(channel, contextWindow);
        step(modelInfoEvent(channel, { efforts: (info?.reasoning?.efforts ?? []).map((e) => String(e.id)), contextWindow }));
      },
      (error) => step(modelInfoEvent(channel, { error: error ?? {} })),
    );
  };
  // Pool routes too: route choice skips a route the host cannot serve.
  const poolRoutes = () => engine.resolved.pools.flatMap((p) => p.routes.map((r) => ({ provider: r.provider, model: r.model })));
  const describeAll = (llm) => {
    if (!engine.up) return;
    [...engine.resolved.chain, ...poolRoutes(), ...(backup ? [backup] : [])].forEach((c) => describe(llm, c));
  };
  // Asked first once the host has loaded every plugin (its loader settled):
  // a provider's adapter registers in its own plugin's activation, and a
  // target asked about before that answers NO_ADAPTER, which the module takes
  // as "cannot be served" and routes the first request away from it. The
  // module comes up well before the host's boot ends.
  const booted = () => Promise.resolve(ctx.get('loader')?.await?.()).catch(() => {});
  // A cold start with no request soon after the boot (an interactive
  // session) comes up anyway: commands, the web view and probes want it.
  coldAllowed.then((ok) => ok && booted()).then(() => {
    if (kicked || lifetime.signal.aborted) return;
    timers.coldStart = setTimeout(kick, COLD_START_MS);
    timers.coldStart.unref?.();
  });
  ctx.inject(['llm'], (sub) => {
    // Once the module is up. The sub may be inactive by then (its service is
    // not its to give once this callback returned): the plugin's own context asks.
    const first = sub.llm;
    Promise.all([up, booted()]).then(() => { if (!lifetime.signal.aborted) describeAll(ctx.get('llm') ?? first); })
      .catch((e) => { if (e !== DISPOSED) logger.warn('dsh-resilience: model info not asked: %s', e?.message ?? e); });
    // Asked again once the routes settle: a host shutting down unregisters
    // its adapters one by one, and a settings change may swap a route out
    // and in; neither should read as "this target cannot be served".
    sub.on('llm/adapters-updated', () => {
      clearTimeout(timers.describe);
      const describing = setTimeout(() => { if (!lifetime.signal.aborted) describeAll(sub.llm); }, ADAPTERS_SETTLE_MS);
      describing.unref?.();
      timers.describe = describing;
    });
  });

  /**
   * The one write path for the backup: `/resilience backup`, the web chip and
   * the settings card all come here, so they never disagree. A model the host
   * cannot resolve is refused (it would end the turn with UNKNOWN_MODEL).
   * @returns {Promise<string | undefined>} why it was refused, or undefined.
   */
  async function setBackup(channel, source = 'command') {
    const llm = ctx.get('llm');
    if (channel && llm) {
      const known = await llm.resolveModelInfo(channel.provider, channel.model, lifetime.signal).then(() => true, () => false);
      if (!known) return `dsh-resilience: the host knows no model ${channel.provider}/${channel.model}`;
    }
    if (!step(setBackupEvent(channel))) {
      return 'dsh-resilience: the policy module failed; see the audit log';
    }
    backup = channel;
    const record = { type: 'backup', channel: backup ? channelId(backup) : null, source };
    report(record);
    web.decided(record);
    await saveBackup(backupFile, backup, report).catch((e) => report({ type: 'backup-not-saved', reason: String(e.message).slice(0, 200) }));
    if (backup && llm) describe(llm, backup);
    return undefined;
  }

  /** Live reconfiguration from the settings card: the engine's bring-up on the new config, health kept. */
  function applyConfig(next) {
    engine.reconfigure(next);
    const llm = ctx.get('llm');
    if (llm) describeAll(llm);
    step(wakeEvent());
    web.changed();
  }

  web.install(ctx, report, logger);

  installCommands(ctx, {
    whenUp, quota,
    reportOf: async (word) => {
      const { reportCommand } = await import('./report-command.js'); // loaded when asked, off the start-up path
      return audit.flush().then(() => reportCommand(join(stateDir, 'audit.jsonl'), word, Date.now()));
    },
    setBackup: (channel) => setBackup(channel, 'command'),
    migrate: () => migrateText(ctx, join(dshHome(), 'cordis.patch.yml')),
    table: () => renderTable(engine.resolved, engine.snapshot(), backup, clockNow()),
  });

  installSkill(ctx, logger); // skill.js: configure-resilience, for the agent

  // Other plugins (subagent templates, ...) call the quota plugin's service by its name.
  ctx.provide?.('llmQuotaRetry', quota.service());
  // The client's view of a session's quota settings, folded from host-known events.
  // Its state is lossless JSON (nulls, never undefined): the host checkpoints it, and a session
  // must reopen after a restart, with or without the plugin (proven by e2e/web).
  // Registered at once: its fold and view read the running config when they run (quota-projection.js).
  ctx.inject(['sessionProjections'], (sub) => {
    // @ts-expect-error -- the host declares a zod schema and a key of its own projection map; the shim's duck-typed {parse} is what its runtime calls
    sub.effect(() => sub.sessionProjections.register(quota.projection()), 'dsh-resilience: quotaRetry projection');
  });

  ctx.effect(() => async () => {
    lifetime.abort(new Error('dsh-resilience disposed'));
    clearTimeout(timers.coldStart);
    clearTimeout(timers.coldKick);
    // A bring-up under way ends first: nothing it starts outlives `stop`. One
    // not begun (a cold start that answered before its kick) is settled as
    // disposed, without a compile: whatever waits on it (the settings card,
    // the session projection) returns now, and the host's disposal with it.
    // Left pending, it held a headless run 5 s past its answer, until the
    // host forced the exit.
    kick();
    await up.catch(() => {});
    engine.dispose();
    waits.dispose();
    timers.wake?.clear();
    await quota.dispose();
    clearTimeout(timers.describe);
    clearInterval(timers.refresh);
    clearTimeout(timers.save);
    clearInterval(timers.refresh); // behind checks the lifetime before it arms anything
    await Promise.allSettled([...probes]);
    await health.queue; // a refresh in flight ends here; steps no longer act on it
    // Saved when it changed, or when the module's word on a cold start did (cold-start.js).
    if (dirty || (engine.up && coldStart.differs(engine.configJson, engine.snapshot()?.coldPass === true))) await health.save();
    await health.close(); // from here on nothing is read or written
    await shared?.close(); // its last writes, if Redis answers at once
    timers.save = undefined;
    await notifier.dispose(); // sends in flight end silently: nothing is written after `stop`
    report({ type: 'stop', pid: process.pid, moduleFailures: engine.failureCounts() });
    await audit.flush();
  }, 'dsh-resilience: end waits, probes and timers; save health; flush the audit log');

  expose?.({ engine, up, reconfigure: applyConfig, health });
}
