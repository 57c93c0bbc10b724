// @ts-check
// dsh-resilience: the Cordis plugin that carries the policy module into the
// DSH host. It maps host events to policy events, asks the module, and carries
// out the answer: waits, swaps, probes, timers, files and events. It holds no
// decision state of its own: that is the module's.
//
// Listener order (README, "How it composes with dsh-llm-retry"): both
// waterfall listeners are prepended, so they run outermost. On a failed
// request the module is asked first (before-host): a spent quota or a channel
// already known down is failed over at once, without waiting out the host's
// retry budget; anything else is deferred to `next()`, and the module is asked
// again only if the host's retry plugin declined it.
import { chmod, mkdir } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { AuditLog } from './audit.js';
import { tapAudit } from './audit-tap.js';
import { loadBackup, saveBackup } from './backup.js';
import { migrateText, parseCommand, renderTable } from './command.js';
import { reportCommand } from './report-command.js';
import { emitCompat } from './compat-events.js';
import { Turns } from './turns.js';
import { makeNotice } from './notice.js';
import { carryOut, channelId, EVENTS } from './effects.js';
import { contextTokensOf, disposedEvent, requestErrorEvent, requestEvent, settledEvent } from './events.js';
import { DEFAULT_PRUNE_MS, DEFAULT_REFRESH_MS, HealthStore } from './health.js';
import { compileModule, Policy } from './policy.js';
import { hostFailure } from './host-llm.js';
import { checkNotify, Notifier } from './notify.js';
import { runProbe } from './probe.js';
import { applyOff } from './off.js';
import { installSkill } from './skill.js';
import { routeAuxCalls } from './aux-route.js';
import { checkShared } from './shared-config.js';
import { loadRedisClient, SharedHealth } from './shared-redis.js';
import { parseQuotaCommand, QuotaRules } from './quota.js';
import { resolveSecret } from './secret.js';
import { watchStalls } from './stall.js';
import { later } from './timers.js';
import { telemetrySink } from './telemetry.js';
import { appendRetry, appendRetryStarted } from './retry-events.js';
import { toolRetryListener } from './tools.js';
import { Waits } from './wait.js';
import { reconfigure } from './reconfigure.js';
import { migrateMarks } from './migrate-marks.js';
import { WebHalf } from './web.js';
import { now as clockNow } from './clock.js';

export const name = 'dsh-resilience';
// Nothing is required: llm (probes, model info) and commands are used when present.
export const inject = [];

/** Config keys the shim owns; every other key belongs to the policy module. */
const SHIM_KEYS = {
  stateDir: (v) => typeof v === 'string' && v !== '' || 'must be a non-empty string',
  healthRefreshMs: (v) => Number.isInteger(v) && v >= 100 && v <= 3_600_000 || 'must be an integer between 100 and 3600000',
  shared: (v) => (checkShared(v), true), // throws naming the nested key
  notify: (v) => (checkNotify(v), true), // throws naming notify[i].url etc.
  healthPruneMs: (v) => Number.isInteger(v) && v >= 60_000 && v <= 365 * 86_400_000 || 'must be an integer between 60000 (a minute) and 31536000000 (a year)',
  notice: (v) => typeof v === 'boolean' || 'must be true or false', // notice.js
  enabled: (v) => typeof v === 'boolean' || 'must be true or false', // off.js
};

function splitConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('dsh-resilience: the config row must be an object');
  }
  const shim = {};
  const policy = {};
  for (const [key, value] of Object.entries(config)) {
    if (!(key in SHIM_KEYS)) {
      policy[key] = value;
      continue;
    }
    const ok = SHIM_KEYS[key](value);
    if (ok !== true) throw new Error(`dsh-resilience: config key "${key}": ${ok}`);
    shim[key] = value;
  }
  return { shim, policy };
}

const dshHome = () => process.env.DSH_HOME || join(homedir(), '.dsh');

/**
 * The state directory: `$DSH_HOME/dsh-resilience` by default. A configured
 * path may start with `~` (the user's home); a relative one is taken against
 * DSH_HOME, not against whatever directory the host was started in, so every
 * host process of one DSH_HOME finds the same files.
 */
export function resolveStateDir(configured) {
  if (configured === undefined) return join(dshHome(), 'dsh-resilience');
  if (configured === '~' || configured.startsWith('~/')) return join(homedir(), configured.slice(1));
  return isAbsolute(configured) ? configured : resolve(dshHome(), configured);
}

/** How long the host's routes must be quiet before the targets are checked again. */
const ADAPTERS_SETTLE_MS = 250;

const randomDraw = () => Math.floor(Math.random() * 2 ** 53);

/** @param {import("@deepseek-ai/cordis").Context} ctx */
export async function apply(ctx, config = {}) {
  const { shim, policy: policyConfig } = splitConfig(config ?? {});
  if (shim.enabled === false) return applyOff(ctx); // off.js: no module, no hooks, no files
  const sharedConfig = shim.shared ? checkShared(shim.shared) : {};
  // Loaded only when configured, so the default install needs no client; a
  // missing client stops activation with the key and how to add it.
  const createRedisClient = sharedConfig.redis ? await loadRedisClient() : undefined;
  const logger = ctx.logger('dsh-resilience');
  const stateDir = resolveStateDir(shim.stateDir);
  // The plugin's files name the user's providers and usage: theirs only. An
  // existing directory of the default name is tightened too (older versions
  // made it 0755); a configured one is only created so.
  await mkdir(stateDir, { recursive: true, mode: 0o700 }).catch(() => {});
  if (shim.stateDir === undefined) await chmod(stateDir, 0o700).catch(() => {});
  const backupFile = join(stateDir, 'backup.json');
  let backup; // shown by /resilience; the module decides with it
  // The web client's host half (web.js): it sees every audit record, so the
  // page follows decisions live. setBackup and applyConfig are below.
  const web = new WebHalf({
    auditPath: join(stateDir, 'audit.jsonl'),
    rowPolicyConfig: policyConfig,
    backup: () => backup,
    setBackup: (channel, source) => setBackup(channel, source),
    applyConfig: (next) => applyConfig(next),
    sessionsDir: join(dshHome(), 'sessions'),
  });
  // The host's telemetry seam and the webhooks follow the audit records (telemetry.js, notify.js).
  const notifier = new Notifier({ targets: checkNotify(shim.notify ?? []), report: (r) => audit.write(r), secret: (ref) => resolveSecret(ctx, ref) });
  const audit = tapAudit(web.tap(new AuditLog(join(stateDir, 'audit.jsonl'))), [telemetrySink(ctx), (r) => notifier.observe(r)]);
  const report = (record) => audit.write(record);
  const policy = new Policy(await compileModule(), policyConfig, logger, report, report);
  web.deps.policy = policy;
  const lifetime = new AbortController();
  const waits = new Waits();
  const pruneMs = shim.healthPruneMs ?? DEFAULT_PRUNE_MS;
  const health = new HealthStore(join(stateDir, 'health.json'), policy, report, { pruneMs });
  const probes = new Set();
  let wakeTimer;
  let saveTimer;
  let dirty = false; // health changed since the last save was started
  let shared; // SharedHealth, when shared.redis is configured

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
  const env = {
    ctx, audit, logger,
    where: (agent) => turns.of(agent),
    notice: makeNotice({ enabled: shim.notice !== false, headless: () => ctx.get('headlessStartup') !== undefined, write: (l) => process.stderr.write(l) }),
    maxFailovers: () => policy.resolved?.maxFailovers,
    cutWait(agent) {
      cuts.get(agent)?.abort(new Error('a channel is usable again'));
    },
    scheduleWake(atMs) {
      wakeTimer?.clear();
      wakeTimer = undefined;
      if (atMs > 0 && !lifetime.signal.aborted) {
        // later() waits out any delay in slices Node accepts: a wake years
        // away (a restored record, a provider's Retry-After) must not spin.
        wakeTimer = later(() => { wakeTimer = undefined; decide({ kind: 'wake' }); }, atMs - clockNow());
        wakeTimer.unref(); // a pending probe time never keeps a finished host alive
      }
    },
    probe(channel) {
      if (lifetime.signal.aborted) return; // disposed: no request leaves after `stop`
      const started = Date.now();
      const llm = ctx.get('llm');
      const settle = (ev) => {
        if (lifetime.signal.aborted) return;
        report({ type: 'probe-result', channel: channelId(channel), ok: ev.ok, code: ev.failure?.code, ms: Date.now() - started });
        const probed = { channel, ok: ev.ok, code: ev.failure?.code, message: ev.failure?.message, ms: Date.now() - started };
        emit(EVENTS.probe, probed);
        emitCompat(ctx, EVENTS.probe, probed, logger);
        decide(ev);
      };
      if (!llm) {
        settle({ kind: 'probe-result', channel, ok: false, failure: { code: 'ABORTED', message: 'no llm service to probe with' } });
        return;
      }
      const running = runProbe(llm, channel, lifetime.signal, policy.resolved?.probeMaxTokens).then(settle);
      probes.add(running);
      running.finally(() => probes.delete(running));
    },
    observe: (fx) => web.effect(fx), // the web view follows the module's effects
    healthChanged() {
      dirty = true;
      if (lifetime.signal.aborted) return; // the disposer saves once, last
      saveTimer ??= setTimeout(() => { saveTimer = undefined; dirty = false; health.save(); shared?.sync(); }, 50);
    },
  };

  /**
   * One policy step, with its effects carried out; undefined when the module
   * failed, or the plugin is disposed (the caller then does what the host
   * would: a late timer or refresh must not re-arm anything).
   * @param {import('./policy-types.js').Event} event
   */
  function decide(event) {
    if (lifetime.signal.aborted) return undefined;
    const out = policy.decide(clockNow(), event);
    if (out) {
      try {
        carryOut(out.effects, env);
      } catch (e) {
        policy.fail(e, 'effects');
      }
    }
    return out;
  }

  // The quota rules' shell (quota.js): per-session settings, long-term waits, balance scripts.
  const quota = new QuotaRules({ ctx, policy, decide, settingsPath: join(stateDir, 'quota-sessions.json'),
    report, emit, lifetime: lifetime.signal });
  env.quota = quota;
  web.deps.quota = quota;
  await quota.load();

  report({ type: 'boot', pid: process.pid, chain: policy.resolved.chain.map(channelId), toolRetry: policy.resolved.tools?.retry,
    pools: policy.resolved.pools.map((p) => p.name), balances: policy.resolved.quota.balances.map((b) => b.provider),
    ...(sharedConfig.redis ? { shared: 'redis' } : {}) });
  await health.refresh(); // what earlier runs and other host processes learnt
  if (await migrateMarks(join(stateDir, 'quota-marks.json'), policy, report)) env.healthChanged(); // once: marks live in health now
  // Hosts on other machines: what they know now, then each change as it happens.
  shared = sharedConfig.redis && new SharedHealth({
    options: sharedConfig.redis,
    createClient: createRedisClient,
    // @ts-expect-error -- called only when sharedConfig.redis is set (the `&&` above); the checker loses that in the closure
    password: async () => (sharedConfig.redis.passwordEnv ? resolveSecret(ctx, sharedConfig.redis.passwordEnv) : undefined),
    snapshot: () => policy.snapshot(),
    merge: (records) => {
      if (lifetime.signal.aborted) return;
      let result;
      try {
        result = policy.restore(JSON.stringify({ channels: health.prune(records) }));
      } catch {
        return; // a refused batch: nothing taken (a trap is logged by the policy wrapper)
      }
      if (result.adopted === 0) return;
      report({ type: 'shared-merged', adopted: result.adopted, of: result.channels });
      env.healthChanged(); // the local file keeps what Redis said
      decide({ kind: 'wake' }); // a reopened channel may want its probe
    },
    audit: report,
    pruneMs,
  });
  if (shared) {
    await shared.start();
    shared.sync(); // what this host knows that Redis may not
  }
  backup = await loadBackup(backupFile, report);
  if (backup) decide({ kind: 'set-backup', channel: backup });
  decide({ kind: 'wake' }); // schedule (or send at once) the probes that knowledge calls for
  const refresher = setInterval(() => {
    health.refresh().then(() => decide({ kind: 'wake' }));
  }, shim.healthRefreshMs ?? DEFAULT_REFRESH_MS);
  refresher.unref?.();

  ctx.on('agent/request', async (payload, next) => {
    const proposed = await next();
    quota.track(payload.agent); // its session's settings (quota, pool, home, pick) reach the module first
    const verdict = decide(requestEvent(payload, proposed, contextTokensOf(ctx, payload.agent)))?.verdict;
    if (verdict?.kind !== 'swap') {
      web.routed(payload.agent, proposed);
      return proposed;
    }
    const swapped = { ...proposed, provider: verdict.provider, model: verdict.model };
    if (verdict.dropReasoningEffort) delete swapped.reasoningEffort;
    // @ts-expect-error -- the host brands its effort ids; the module's is one the target model lists (model-info), a plain string in JSON
    if (verdict.reasoningEffort) swapped.reasoningEffort = verdict.reasoningEffort; // a pool route's own
    web.routed(payload.agent, swapped);
    return swapped;
  }, true);

  ctx.on('agent/request-error', async (payload, next) => {
    turns.note(payload); // failover and give-up records say where in the task (turns.js)
    if (quota.active) quota.noteFailure(payload);
    let out = decide(requestErrorEvent(payload, 'before-host', randomDraw()));
    if (out === undefined) return next();
    let downstream;
    let asked = false; // next() already answered (after-host)
    if (out.verdict.kind === 'defer') {
      downstream = await next();
      asked = true;
      if (downstream !== undefined || payload.signal?.aborted) return downstream;
      out = decide(requestErrorEvent(payload, 'after-host', randomDraw()));
      if (out === undefined || out.verdict.kind === 'delegate' || out.verdict.kind === 'defer') return downstream;
    }
    const verdict = out.verdict;
    switch (verdict.kind) {
      case 'retry': {
        const spill = out.effects.find((fx) => fx.kind === 'spill');
        if (spill) spillRow(payload, spill);
        return { kind: 'retry' };
      }
      case 'wait': {
        // A long-term quota wait (the module says so: held) can also be ended
        // by the session's switch: the failure then goes back to the host.
        const r = await waitThenRetry(payload, verdict.delayMs, out.effects.find((fx) => fx.kind === 'retry'), verdict.held === true);
        if (r === DISABLED) return asked ? downstream : next();
        return r;
      }
      case 'delegate':
        return verdict.original ? handBack(verdict.original, next) : next();
      default:
        policy.fail(new Error(`unexpected verdict "${verdict.kind}"`), 'request-error');
        return next();
    }
  }, true);

  /**
   * Ends the turn with the failure that made the agent leave its channel,
   * not the one in hand (a failover target the host could not serve): thrown
   * as the host's LlmError, which the loop reports as it is.
   */
  async function handBack(original, next) {
    const error = await hostFailure(original).catch(() => undefined);
    if (!error) return next(); // no host LlmError to carry it: the failure in hand goes back
    throw error;
  }

  /**
   * A spill is a retry without a wait: the session shows it as the stock
   * dsh-llm-retry row would, `llm/retry` (on the channel it goes to) and
   * `llm/retry-started` at once.
   */
  function spillRow(payload, spill) {
    try {
      const retryId = appendRetry(payload, { channel: spill.to, attempt: spill.failures }, 0);
      appendRetryStarted(payload, retryId, spill.failures);
    } catch (e) {
      policy.fail(e, 'llm/retry append (spill)');
    }
  }

  const DISABLED = Symbol('quota wait disabled');
  async function waitThenRetry(payload, delayMs, effect, held) {
    let retryId;
    try {
      retryId = appendRetry(payload, effect, delayMs);
    } catch (e) {
      policy.fail(e, 'llm/retry append');
    }
    const agentId = String(payload.agent?.id ?? 'unknown');
    const hold = held ? quota.hold(agentId) : undefined;
    const cut = new AbortController();
    cuts.set(agentId, cut);
    const signal = AbortSignal.any([payload.signal, hold?.signal, cut.signal].filter(Boolean));
    const slept = await waits.sleep(delayMs, signal);
    if (cuts.get(agentId) === cut) cuts.delete(agentId);
    if (hold) quota.releaseHold(agentId, hold);
    const wasCut = !slept && cut.signal.aborted && !payload.signal?.aborted && !hold?.signal.aborted && !waits.lifetime.signal.aborted;
    if (!slept && !wasCut) return hold?.signal.aborted && !payload.signal?.aborted ? DISABLED : undefined; // cancelled: the host ends the turn
    try {
      if (retryId) appendRetryStarted(payload, retryId, effect?.attempt ?? 1);
    } catch (e) {
      policy.fail(e, 'llm/retry-started append');
    }
    return { kind: 'retry' };
  }

  ctx.on('agent/status', ({ agent, status }) => {
    if (status === 'idle') decide(settledEvent(agent));
  });
  ctx.on('agent/disposed', ({ agent }) => {
    decide(disposedEvent(agent));
    quota.forget(agent);
  });

  // Tool calls the operator declared safe to repeat (tools.js). Prepended, so
  // the first attempt runs under every other wrapper, the host's timeout
  // policy included; each repeat runs under a deadline of its own.
  ctx.on('tools/execute', toolRetryListener({
    decide: (event) => decide(event)?.verdict,
    waits,
    lifetime: lifetime.signal,
    declaredTimeout: (tool, agent) => ctx.get('tools')?.get(tool, agent)?.timeoutMs,
    fail: (e, what) => policy.fail(e, what),
  }), true);

  // Every streaming model call, the auxiliary ones included, under a silence
  // watchdog (stall.js): a stalled one is cut and fails as a TIMEOUT.
  await watchStalls(ctx, (event) => decide(event)?.verdict);
  // Compaction and session-title calls off an open channel (aux-route.js).
  // Registered after the watchdog and prepended, so it runs first and the
  // copy it sends is watched like any call.
  await routeAuxCalls(ctx, (event) => decide(event)?.verdict, report);

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
        const w = info?.context?.contextWindow;
        web.window?.(channel, w);
        decide({ kind: 'model-info', channel, known: true, efforts: (info?.reasoning?.efforts ?? []).map((e) => String(e.id)),
          ...(Number.isSafeInteger(w) && w > 0 ? { contextWindow: w } : {}) });
      },
      (e) => decide({ kind: 'model-info', channel, known: false, efforts: [], ...(typeof e?.code === 'string' && e.code ? { code: e.code } : {}) }),
    );
  };
  let describeTimer;
  // Pool routes too: route choice skips a route the host cannot serve.
  const poolRoutes = () => policy.resolved.pools.flatMap((p) => p.routes.map((r) => ({ provider: r.provider, model: r.model })));
  const describeAll = (llm) => [...policy.resolved.chain, ...poolRoutes(), ...(backup ? [backup] : [])].forEach((c) => describe(llm, c));
  ctx.inject(['llm'], (sub) => {
    describeAll(sub.llm);
    // Asked again once the routes settle: a host shutting down unregisters
    // its adapters one by one, and a settings change may swap a route out
    // and in; neither should read as "this target cannot be served".
    sub.on('llm/adapters-updated', () => {
      clearTimeout(describeTimer);
      describeTimer = setTimeout(() => { if (!lifetime.signal.aborted) describeAll(sub.llm); }, ADAPTERS_SETTLE_MS);
      describeTimer.unref?.();
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
    if (!decide({ kind: 'set-backup', ...(channel ? { channel } : {}) })) {
      return 'dsh-resilience: the policy module failed; see the audit log';
    }
    backup = channel;
    report({ type: 'backup', channel: backup ? channelId(backup) : null, source });
    await saveBackup(backupFile, backup, report).catch((e) => report({ type: 'backup-not-saved', reason: String(e.message).slice(0, 200) }));
    if (backup && llm) describe(llm, backup);
    return undefined;
  }

  /** Live reconfiguration from the settings card: channel health is kept (reconfigure.js). */
  function applyConfig(next) {
    reconfigure(policy, next); // retold the backup and model info (Policy.retell); marks come with health
    if (backup) decide({ kind: 'set-backup', channel: backup });
    const llm = ctx.get('llm');
    if (llm) describeAll(llm);
    decide({ kind: 'wake' });
    web.changed();
  }

  web.install(ctx, report, logger);

  ctx.inject(['commands'], (sub) => {
    // The quota plugin's command names stay as aliases, so its users' habits work.
    /** @type {Array<[string, string, string, (agent: any, arg: string | undefined) => any]>} */
    const aliases = [
      ['quota-retry', 'dsh-resilience: this session\'s quota retry (long-term waits)', 'on|off|default|status', (agent, arg) => quota.answered(quota.quotaCommand(agent, arg))],
      ['quota-pool', 'dsh-resilience: this session\'s route pool', '<pool>|off|default|status', (agent, arg) => quota.answered(quota.poolCommand(agent, arg))],
      ['quota-routes', 'dsh-resilience: pools, routes, balance readings and exhaustion marks', '[pool]', (_agent, arg) => quota.routesTable(arg)],
    ];
    for (const [name, description, hint, run] of aliases) {
      sub.effect(() => sub.commands.register({
        name, description, input: { hint },
        handler: async ({ agent, rawInput }) => run(agent, String(rawInput ?? '').trim().split(/\s+/).filter(Boolean)[0]),
      }), `dsh-resilience: /${name}`);
    }
    sub.effect(() => sub.commands.register({
      name: 'resilience',
      description: 'dsh-resilience: channel health, the backup to fail over to first, quota retry, pools and routes',
      input: { hint: '[backup <provider/model> | backup off | quota on|off|default|status | pool <pool>|off|default|status | routes [pool] | report [24h|7d] | migrate]' },
      handler: async ({ agent, rawInput }) => {
        const q = parseQuotaCommand('resilience', rawInput);
        if (q?.kind === 'quota') return quota.answered(quota.quotaCommand(agent, q.arg));
        if (q?.kind === 'pool') return quota.answered(quota.poolCommand(agent, q.arg));
        const words = String(rawInput ?? '').trim().split(/\s+/).filter(Boolean);
        if (words[0] === 'routes') return quota.routesTable(words[1]);
        if (words[0] === 'report') return audit.flush().then(() => reportCommand(join(stateDir, 'audit.jsonl'), words[1], Date.now()));
        const cmd = parseCommand(rawInput);
        if (cmd.kind === 'error') return { kind: 'error', text: cmd.text };
        if (cmd.kind === 'migrate') {
          const m = await migrateText(ctx, join(dshHome(), 'cordis.patch.yml'));
          return { kind: m.ok ? 'success' : 'error', text: m.text };
        }
        if (cmd.kind === 'backup') {
          const refused = await setBackup(cmd.channel, 'command');
          if (refused) return { kind: 'error', text: refused };
        }
        return { kind: 'success', text: renderTable(policy.resolved, policy.snapshot(), backup, clockNow()) };
      },
    }), 'dsh-resilience: /resilience');
  });

  installSkill(ctx, logger); // skill.js: configure-resilience, for the agent

  // Other plugins (subagent templates, ...) call the quota plugin's service by its name.
  ctx.provide?.('llmQuotaRetry', quota.service());
  // The client's view of a session's quota settings, folded from host-known events.
  // Its state is lossless JSON (nulls, never undefined): the host checkpoints it, and a session
  // must reopen after a restart, with or without the plugin (proven by e2e/web).
  ctx.inject(['sessionProjections'], (sub) => {
    // @ts-expect-error -- the host declares a zod schema and a key of its own projection map; the shim's duck-typed {parse} is what its runtime calls
    sub.effect(() => sub.sessionProjections.register(quota.projection()), 'dsh-resilience: quotaRetry projection');
  });

  ctx.effect(() => async () => {
    lifetime.abort(new Error('dsh-resilience disposed'));
    waits.dispose();
    wakeTimer?.clear();
    await quota.dispose();
    clearTimeout(describeTimer);
    clearInterval(refresher);
    clearTimeout(saveTimer);
    await Promise.allSettled([...probes]);
    await health.queue; // a refresh in flight ends here; decide() no longer acts on it
    if (dirty) await health.save();
    await health.close(); // from here on nothing is read or written
    await shared?.close(); // its last writes, if Redis answers at once
    saveTimer = undefined;
    await notifier.dispose(); // sends in flight end silently: nothing is written after `stop`
    report({ type: 'stop', pid: process.pid, moduleFailures: policy.failureCounts() });
    await audit.flush();
  }, 'dsh-resilience: end waits, probes and timers; save health; flush the audit log');
}
