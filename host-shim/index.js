// @ts-check
// dsh-resilience: the Cordis plugin that carries the policy module into the
// DSH host. This file is the composition root: it builds the parts in order
// (the engine: the module's life behind a few verbs, engine.js; the
// process's life around it, lifetime.js; what the module asks this process
// to do, shell.js; the stores and the effect subscribers) and registers them
// with the host. It holds no decision state of its own: that is the module's.
//
// Start-up: `apply` registers everything and returns; the module is compiled
// and brought up behind it, off the host's boot (lifetime.js).
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { AuditLog } from './audit.js';
import { tapAudit } from './audit-tap.js';
import { Backup } from './backup.js';
import { installCommands, migrateText, renderTable } from './command.js';
import { Turns } from './turns.js';
import { makeNotice } from './notice.js';
import { deliver } from './effects.js';
import { auditSubscriber } from './effect-audit.js';
import { eventSubscriber, safeEmit } from './effect-events.js';
import { shellSubscriber } from './effect-shell.js';
import { disposedEvent, settledEvent, wakeEvent } from './events.js';
import { HealthStore } from './health.js';
import { compileModule, configText, Engine } from './engine.js';
import { ColdStart, firstRunWord } from './cold-start.js';
import { Lifetime, DISPOSED } from './lifetime.js';
import { ModelInfo } from './model-info.js';
import { Shell } from './shell.js';
import { stop } from './stop.js';
import { Notifier } from './notify.js';
import { installSkill, skillWanted } from './skill.js';
import { routeAuxCalls } from './aux-route.js';
import { checkShared } from './shared-config.js';
import { QuotaRules } from './quota.js';
import { requestListeners } from './requests.js';
import { dshHome, resolveStateDir, splitConfig } from './row.js';
import { resolveSecret } from './secret.js';
import { Secrets } from './redaction.js';
import { watchStalls } from './stall.js';
import { telemetrySink } from './telemetry.js';
import { toolRetryListener } from './tools.js';
import { Waits } from './wait.js';
import { WebHalf } from './web.js';
import { now as clockNow } from './clock.js';

export { resolveStateDir };
export const name = 'dsh-resilience';
// Nothing is required: llm (probes, model info) and commands are used when present.
export const inject = /** @type {string[]} */ ([]);

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
  const sharedConfig = shim.shared ? checkShared(shim.shared) : {};
  const firstRun = firstRunWord(stateDir, policyConfig, Boolean(sharedConfig.redis)); // before anything writes there
  const life = new Lifetime({ stateDir, configJson: configText(policyConfig), compiled, compile });
  const { signal } = life;
  // Loaded only when configured, so the default install needs no client; a
  // missing client stops activation with the key and how to add it.
  const sharedRedis = sharedConfig.redis ? await import('./shared-redis.js') : undefined;
  const createRedisClient = sharedRedis ? await sharedRedis.loadRedisClient() : undefined;
  const logger = ctx.logger('dsh-resilience');
  // The web client's host half (web.js): it follows the module's effects, so the page follows decisions live.
  /** @type {WebHalf} */ const web = new WebHalf({
    auditPath: join(stateDir, 'audit.jsonl'), rowPolicyConfig: policyConfig, sessionsDir: join(dshHome(), 'sessions'),
    backup: () => engine.backup(), setBackup: (channel, source) => backup.set(channel, source), applyConfig: (next) => applyConfig(next),
    whenUp: () => life.whenUp(), upSettled: () => life.upSettled(),
  });
  // The host's telemetry seam follows the audit records (telemetry.js); the page answers its long
  // poll on every record too (a setting, a merged health): it reads none. The webhooks go where the
  // module's audit entries say (notify.js, through the audit subscriber).
  const notifier = new Notifier({ targets: () => engine.resolved?.notify ?? [], report: (r) => audit.write(r), secret: (ref) => resolveSecret(ctx, ref) });
  const audit = tapAudit(new AuditLog(join(stateDir, 'audit.jsonl')), [() => web.changed(), telemetrySink(ctx, () => engine)]);
  const report = (/** @type {object} */ record) => audit.write(record);
  const engine = new Engine(life.compiling, policyConfig, logger, report, report);
  web.deps.policy = engine;
  // The values of every credential the plugin can resolve, for the module to redact provider text by (redaction.js).
  const secrets = new Secrets({ ctx, engine, own: () => [sharedConfig.redis?.passwordEnv, ...(engine.resolved?.notify ?? []).map((t) => t.secretEnv),
    ...(engine.resolved?.quota?.balances ?? []).map((b) => b.apiKeyEnv)] });
  const waits = new Waits();
  const coldStart = new ColdStart(join(stateDir, 'cold-start.json'), report, firstRun);
  const health = new HealthStore(join(stateDir, 'health.json'), engine, report,
    { saved: (coldPass) => coldStart.note(engine.configJson, coldPass) });
  const step = (/** @type {any} */ event) => (signal.aborted ? undefined : engine.step(event));
  const emit = safeEmit(ctx, logger);
  const turns = new Turns();
  // The quota rules' shell (quota.js): per-session settings, long-term waits, balance scripts.
  const quota = new QuotaRules({ ctx, policy: engine, decide: step, settingsPath: join(stateDir, 'quota-sessions.json'), report, emit, lifetime: signal });
  web.deps.quota = quota;
  const shell = new Shell({ ctx, engine, step, report, web, emit, logger, health, signal });
  /** @type {ModelInfo} */ const models = new ModelInfo({ ctx, engine, step, web, backup: () => engine.backup(), signal });
  /** @type {Backup} */ const backup = new Backup({ path: join(stateDir, 'backup.json'), ctx, step, report, decided: (r) => web.decided(r), describe: (llm, c) => models.describe(llm, c), signal });
  // Effects are the only way out of the module: each goes, in order, to these subscribers (effects.js).
  /** @type {import('./effects.js').Subscriber[]} */
  const subscribers = [
    { role: 'web view', view: true, effect: (fx) => web.effect(fx) },
    { role: 'shell', effect: shellSubscriber(shell) },
    { role: 'quota shell', effect: (fx) => quota.effect(fx) },
    { role: 'audit log', effect: auditSubscriber({ audit, logger, where: (agent) => turns.of(agent), notify: (n, type) => notifier.observe(n, type),
      notice: makeNotice({ enabled: shim.notice !== false, headless: () => ctx.get('headlessStartup') !== undefined, write: (l) => process.stderr.write(l) }) }) },
    { role: 'Cordis events', effect: eventSubscriber(ctx, logger) },
  ];
  engine.subscribe((out) => deliver(out.effects, subscribers, logger));

  // What the first request needs, read at once, in parallel with the compile: the
  // earlier runs' health and backup, the sessions' settings. The plugin's files name
  // the user's providers and usage: theirs only (an existing default directory is
  // tightened too: older versions made it 0755; a configured one is only created so).
  const dir = mkdir(stateDir, { recursive: true, mode: 0o700 }).catch(() => {})
    .then(() => (shim.stateDir === undefined ? chmod(stateDir, 0o700).catch(() => {}) : undefined));
  const facts = Promise.all([health.peek(), backup.load(), quota.settings.load(), dir]);
  facts.catch(() => {}); // the bring-up reports it
  const booted = () => Promise.resolve(ctx.get('loader')?.await?.()).catch(() => {});
  life.begin({ ctx, engine, step, report, logger, facts, health, quota, shell, coldStart, sharedConfig, sharedRedis, createRedisClient,
    refreshMs: shim.healthRefreshMs, booted });

  secrets.follow(life.up);

  // ---- the host's events: each talks only to the engine
  const { onRequest, onRequestError } = requestListeners({ ctx, engine, whenUp: () => life.whenUp(), sendCold: (p, c) => life.sendCold(p, c), quota, web, turns, waits, cuts: shell.cuts,
    secretsHeld: () => secrets.held });
  ctx.on('agent/request', onRequest, true);
  ctx.on('agent/request-error', onRequestError, true);
  ctx.on('agent/status', ({ agent, status }) => { if (status === 'idle') step(settledEvent(agent)); });
  ctx.on('agent/disposed', ({ agent }) => { step(disposedEvent(agent)); quota.forget(agent); });
  // Tool calls the operator declared safe to repeat (tools.js). Prepended, so the first
  // attempt runs under every other wrapper; each repeat runs under a deadline of its own.
  ctx.on('tools/execute', toolRetryListener({
    decide: (event) => step(event)?.verdict, waits, lifetime: signal,
    declaredTimeout: (tool, agent) => ctx.get('tools')?.get(tool, agent)?.timeoutMs,
    fail: (e, what) => engine.fail(e, what), ready: () => (engine.up || signal.aborted ? undefined : life.whenUp().catch(() => false)),
  }), true);
  // Every streaming model call under a silence watchdog (stall.js); a stream opened
  // before the module is up (a request sent cold) is watched once it is. Then the
  // compaction and title calls off an open channel (aux-route.js), prepended after
  // it so it runs first and the copy it sends is watched like any call.
  watchStalls(ctx, (event) => step(event)?.verdict, () => (engine.up || signal.aborted ? undefined : life.upSettled().catch(() => false)));
  routeAuxCalls(ctx, (event) => step(event)?.verdict, report);
  models.follow(life.up, booted, logger, DISPOSED);

  /** Live reconfiguration from the settings card: the engine's bring-up on the new config, health kept. */
  function applyConfig(/** @type {object} */ next) {
    engine.reconfigure(next);
    const llm = ctx.get('llm');
    if (llm) models.describeAll(llm);
    step(wakeEvent());
    web.changed();
    skill.changed(); // `skill` may have changed: the host lists the catalog again
  }

  // ---- registered at once: none of these waits for the engine (what needs it waits inside)
  web.install(ctx, report, logger);
  installCommands(ctx, {
    whenUp: () => life.whenUp(), quota,
    reportOf: async (word) => {
      const { reportCommand } = await import('./report-command.js'); // loaded when asked, off the start-up path
      return audit.flush().then(() => reportCommand(join(stateDir, 'audit.jsonl'), word, Date.now()));
    },
    setBackup: (channel) => backup.set(channel, 'command'),
    migrate: () => migrateText(ctx, join(dshHome(), 'cordis.patch.yml')),
    table: () => renderTable(engine.resolved, engine.snapshot(), engine.backup(), clockNow()),
  });
  // skill.js: configure-resilience, for the agent, when the row's `skill` says so.
  const skill = installSkill(ctx, logger, () => skillWanted({
    resolved: () => engine.resolved, rowStates: 'skill' in policyConfig, whenUp: () => life.whenUp(),
  }));
  // Other plugins (subagent templates, ...) call the quota plugin's service by its name.
  ctx.provide?.('llmQuotaRetry', quota.service());
  // The client's view of a session's quota settings, folded from host-known events
  // (quota-projection.js): lossless JSON state, so a session reopens after a
  // restart with or without the plugin (proven by e2e/web).
  ctx.inject(['sessionProjections'], (sub) => {
    // @ts-expect-error -- the host declares a zod schema and a key of its own projection map; the shim's duck-typed {parse} is what its runtime calls
    sub.effect(() => sub.sessionProjections.register(quota.projection()), 'dsh-resilience: quotaRetry projection');
  });

  ctx.effect(() => () => stop({ notifier, life, engine, waits, models, quota, shell, health, report, audit }),
    'dsh-resilience: end waits, probes and timers; save health; flush the audit log');

  expose?.({ engine, up: life.up, reconfigure: applyConfig, health });
}
