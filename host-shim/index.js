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
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from './audit.js';
import { loadBackup, saveBackup } from './backup.js';
import { parseCommand, renderTable } from './command.js';
import { carryOut, EVENTS } from './effects.js';
import { disposedEvent, requestErrorEvent, requestEvent, settledEvent } from './events.js';
import { DEFAULT_REFRESH_MS, HealthStore } from './health.js';
import { compileModule, Policy } from './policy.js';
import { hostFailure } from './host-llm.js';
import { runProbe } from './probe.js';
import { watchStalls } from './stall.js';
import { appendRetry, appendRetryStarted } from './retry-events.js';
import { toolRetryListener } from './tools.js';
import { Waits } from './wait.js';

export const name = 'dsh-resilience';
// Nothing is required: llm (probes, model info) and commands are used when present.
export const inject = [];

/** Config keys the shim owns; every other key belongs to the policy module. */
const SHIM_KEYS = {
  stateDir: (v) => typeof v === 'string' && v !== '' || 'must be a non-empty string',
  healthRefreshMs: (v) => Number.isInteger(v) && v >= 100 && v <= 3_600_000 || 'must be an integer between 100 and 3600000',
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

function defaultStateDir() {
  const home = process.env.DSH_HOME || join(homedir(), '.dsh');
  return join(home, 'dsh-resilience');
}

/** How long the host's routes must be quiet before the targets are checked again. */
const ADAPTERS_SETTLE_MS = 250;

const randomDraw = () => Math.floor(Math.random() * 2 ** 53);
const key = (c) => `${c.provider}/${c.model}`;

export async function apply(ctx, config = {}) {
  const { shim, policy: policyConfig } = splitConfig(config ?? {});
  const logger = ctx.logger('dsh-resilience');
  const stateDir = shim.stateDir ?? defaultStateDir();
  const audit = new AuditLog(join(stateDir, 'audit.jsonl'));
  const report = (record) => audit.write(record);
  const policy = new Policy(await compileModule(), policyConfig, logger, report);
  const lifetime = new AbortController();
  const waits = new Waits();
  const health = new HealthStore(join(stateDir, 'health.json'), policy, report);
  const probes = new Set();
  let wakeTimer;
  let saveTimer;
  let backup; // shown by /resilience; the module decides with it

  const emit = (event, payload) => {
    try {
      ctx.emit(event, payload);
    } catch (e) {
      logger.warn('a %s listener failed: %s', event, e?.message ?? e);
    }
  };

  const env = {
    ctx, audit, logger,
    scheduleWake(atMs) {
      clearTimeout(wakeTimer);
      wakeTimer = undefined;
      if (atMs > 0 && !lifetime.signal.aborted) {
        wakeTimer = setTimeout(() => { wakeTimer = undefined; decide({ kind: 'wake' }); }, Math.max(0, atMs - Date.now()));
        wakeTimer.unref?.(); // a pending probe time never keeps a finished host alive
      }
    },
    probe(channel) {
      const started = Date.now();
      const llm = ctx.get('llm');
      const settle = (ev) => {
        if (lifetime.signal.aborted) return;
        report({ type: 'probe-result', channel: key(channel), ok: ev.ok, code: ev.failure?.code, ms: Date.now() - started });
        emit(EVENTS.probe, { channel, ok: ev.ok, code: ev.failure?.code, ms: Date.now() - started });
        decide(ev);
      };
      if (!llm) {
        settle({ kind: 'probe-result', channel, ok: false, failure: { code: 'ABORTED', message: 'no llm service to probe with' } });
        return;
      }
      const running = runProbe(llm, channel, lifetime.signal).then(settle);
      probes.add(running);
      running.finally(() => probes.delete(running));
    },
    healthChanged() {
      saveTimer ??= setTimeout(() => { saveTimer = undefined; health.save(); }, 50);
    },
  };

  /** One policy step, with its effects carried out; undefined when the module failed. */
  function decide(event) {
    const out = policy.decide(Date.now(), event);
    if (out) {
      try {
        carryOut(out.effects, env);
      } catch (e) {
        policy.fail(e, 'effects');
      }
    }
    return out;
  }

  report({ type: 'boot', pid: process.pid, chain: policy.resolved.chain.map(key), toolRetry: policy.resolved.tools?.retry });
  await health.refresh(); // what earlier runs and other host processes learnt
  const backupFile = join(stateDir, 'backup.json');
  backup = await loadBackup(backupFile, report);
  if (backup) decide({ kind: 'set-backup', channel: backup });
  decide({ kind: 'wake' }); // schedule (or send at once) the probes that knowledge calls for
  const refresher = setInterval(() => {
    health.refresh().then(() => decide({ kind: 'wake' }));
  }, shim.healthRefreshMs ?? DEFAULT_REFRESH_MS);
  refresher.unref?.();

  ctx.on('agent/request', async (payload, next) => {
    const proposed = await next();
    const verdict = decide(requestEvent(payload, proposed))?.verdict;
    if (verdict?.kind !== 'swap') return proposed;
    const swapped = { ...proposed, provider: verdict.provider, model: verdict.model };
    if (verdict.dropReasoningEffort) delete swapped.reasoningEffort;
    return swapped;
  }, true);

  ctx.on('agent/request-error', async (payload, next) => {
    let out = decide(requestErrorEvent(payload, 'before-host', randomDraw()));
    if (out === undefined) return next();
    if (out.verdict.kind === 'defer') {
      const downstream = await next();
      if (downstream !== undefined || payload.signal?.aborted) return downstream;
      out = decide(requestErrorEvent(payload, 'after-host', randomDraw()));
      if (out === undefined || out.verdict.kind === 'delegate' || out.verdict.kind === 'defer') return downstream;
    }
    const verdict = out.verdict;
    switch (verdict.kind) {
      case 'retry':
        return { kind: 'retry' };
      case 'wait':
        return waitThenRetry(payload, verdict.delayMs, out.effects.find((fx) => fx.kind === 'retry'));
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

  async function waitThenRetry(payload, delayMs, effect) {
    let retryId;
    try {
      retryId = appendRetry(payload, effect, delayMs);
    } catch (e) {
      policy.fail(e, 'llm/retry append');
    }
    if (!(await waits.sleep(delayMs, payload.signal))) return undefined; // cancelled: the host ends the turn
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

  // What the host knows of the models the plugin may swap to decides whether
  // a reasoning effort survives the swap.
  // A target the host cannot route (no adapter, a model the route does not
  // list) is never failed over to: the module hears the host's code.
  const describe = (llm, channel) => llm.resolveModelInfo(channel.provider, channel.model, lifetime.signal).then(
    (info) => decide({ kind: 'model-info', channel, known: true, efforts: (info?.reasoning?.efforts ?? []).map((e) => String(e.id)) }),
    (e) => decide({ kind: 'model-info', channel, known: false, efforts: [], ...(typeof e?.code === 'string' && e.code ? { code: e.code } : {}) }),
  );
  let describeTimer;
  ctx.inject(['llm'], (sub) => {
    const all = () => [...policy.resolved.chain, ...(backup ? [backup] : [])].forEach((c) => describe(sub.llm, c));
    all();
    // Asked again once the routes settle: a host shutting down unregisters
    // its adapters one by one, and a settings change may swap a route out
    // and in; neither should read as "this target cannot be served".
    sub.on('llm/adapters-updated', () => {
      clearTimeout(describeTimer);
      describeTimer = setTimeout(() => { if (!lifetime.signal.aborted) all(); }, ADAPTERS_SETTLE_MS);
      describeTimer.unref?.();
    });
  });

  ctx.inject(['commands'], (sub) => {
    sub.effect(() => sub.commands.register({
      name: 'resilience',
      description: 'dsh-resilience: channel health, and the backup to fail over to first',
      input: { hint: '[backup <provider/model> | backup off]' },
      handler: async ({ rawInput }) => {
        const cmd = parseCommand(rawInput);
        if (cmd.kind === 'error') return { kind: 'error', text: cmd.text };
        if (cmd.kind === 'backup') {
          if (!decide({ kind: 'set-backup', ...(cmd.channel ? { channel: cmd.channel } : {}) })) {
            return { kind: 'error', text: 'dsh-resilience: the policy module failed; see the audit log' };
          }
          backup = cmd.channel;
          report({ type: 'backup', channel: backup ? key(backup) : null });
          await saveBackup(backupFile, backup).catch((e) => report({ type: 'backup-not-saved', reason: String(e.message).slice(0, 200) }));
          if (backup && sub.get('llm')) describe(sub.get('llm'), backup);
        }
        return { kind: 'success', text: renderTable(policy.resolved, policy.snapshot(), backup, Date.now()) };
      },
    }), 'dsh-resilience: /resilience');
  });

  ctx.effect(() => async () => {
    lifetime.abort(new Error('dsh-resilience disposed'));
    waits.dispose();
    clearTimeout(wakeTimer);
    clearTimeout(describeTimer);
    clearInterval(refresher);
    await Promise.allSettled([...probes]);
    if (saveTimer) {
      clearTimeout(saveTimer);
      await health.save();
    }
    await health.queue;
    report({ type: 'stop', pid: process.pid, moduleFailures: policy.failureCounts() });
    await audit.flush();
  }, 'dsh-resilience: end waits, probes and timers; save health; flush the audit log');
}
