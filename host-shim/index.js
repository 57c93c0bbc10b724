// dsh-resilience: the Cordis plugin that carries the policy module into the
// DSH host. It maps host events to policy events, asks the module, and carries
// out the answer. It holds no decision state of its own: that is the module's.
//
// Listener order (see README "How it composes with dsh-llm-retry"): both
// waterfall listeners are prepended, so they run outermost. On a failed
// request the module is asked first (before-host): a spent quota or a channel
// already known down is failed over at once, without waiting out the host's
// retry budget; anything else is deferred to `next()`, and the module is asked
// again only if the host's retry plugin declined it.
import { homedir } from 'node:os';
import { join } from 'node:path';
import { AuditLog } from './audit.js';
import { carryOut } from './effects.js';
import { disposedEvent, requestErrorEvent, requestEvent, settledEvent } from './events.js';
import { compileModule, Policy } from './policy.js';
import { Waits } from './wait.js';

export const name = 'dsh-resilience';
// Nothing is required: the llm service is used when present (effort checks).
export const inject = [];

/** Config keys the shim owns; every other key belongs to the policy module. */
const SHIM_KEYS = { stateDir: 'string' };

function splitConfig(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) {
    throw new Error('dsh-resilience: the config row must be an object');
  }
  const shim = {};
  const policy = {};
  for (const [key, value] of Object.entries(config)) {
    if (key in SHIM_KEYS) {
      if (typeof value !== SHIM_KEYS[key]) throw new Error(`dsh-resilience: config key "${key}": must be a ${SHIM_KEYS[key]}`);
      shim[key] = value;
    } else {
      policy[key] = value;
    }
  }
  return { shim, policy };
}

function defaultStateDir() {
  const home = process.env.DSH_HOME || join(homedir(), '.dsh');
  return join(home, 'dsh-resilience');
}

const randomDraw = () => Math.floor(Math.random() * 2 ** 53);

export async function apply(ctx, config = {}) {
  const { shim, policy: policyConfig } = splitConfig(config ?? {});
  const logger = ctx.logger('dsh-resilience');
  const stateDir = shim.stateDir ?? defaultStateDir();
  const audit = new AuditLog(join(stateDir, 'audit.jsonl'));
  const policy = new Policy(await compileModule(), policyConfig, logger, (record) => audit.write(record));
  const waits = new Waits();
  const env = { ctx, audit, logger };
  audit.write({ type: 'boot', pid: process.pid, chain: policy.resolved.chain.map((c) => `${c.provider}/${c.model}`) });

  const decide = (event) => {
    const out = policy.decide(Date.now(), event);
    if (out) {
      try {
        carryOut(out.effects, env);
      } catch (e) {
        policy.fail(e, 'effects');
      }
    }
    return out?.verdict;
  };

  ctx.on('agent/request', async (payload, next) => {
    const proposed = await next();
    const verdict = decide(requestEvent(payload, proposed));
    if (verdict?.kind !== 'swap') return proposed;
    const swapped = { ...proposed, provider: verdict.provider, model: verdict.model };
    if (swapped.reasoningEffort !== undefined && !(await effortSupported(ctx, swapped, payload.signal))) {
      // The host refuses an effort the target does not list before the request
      // is sent and outside agent/request-error, which would end the turn.
      logger.info('dropping reasoningEffort %s: %s/%s does not advertise it', swapped.reasoningEffort, swapped.provider, swapped.model);
      delete swapped.reasoningEffort;
    }
    return swapped;
  }, true);

  ctx.on('agent/request-error', async (payload, next) => {
    let verdict = decide(requestErrorEvent(payload, 'before-host', randomDraw()));
    if (verdict === undefined) return next();
    if (verdict.kind === 'defer') {
      const downstream = await next();
      if (downstream !== undefined || payload.signal?.aborted) return downstream;
      verdict = decide(requestErrorEvent(payload, 'after-host', randomDraw()));
      if (verdict === undefined || verdict.kind === 'delegate' || verdict.kind === 'defer') return downstream;
    }
    switch (verdict.kind) {
      case 'retry':
        return { kind: 'retry' };
      case 'wait':
        return (await waits.sleep(verdict.delayMs, payload.signal)) ? { kind: 'retry' } : undefined;
      case 'delegate':
        return next();
      default:
        policy.fail(new Error(`unexpected verdict "${verdict.kind}"`), 'request-error');
        return next();
    }
  }, true);

  ctx.on('agent/status', ({ agent, status }) => {
    if (status === 'idle') decide(settledEvent(agent));
  });
  ctx.on('agent/disposed', ({ agent }) => {
    decide(disposedEvent(agent));
  });

  ctx.effect(() => async () => {
    waits.dispose();
    audit.write({ type: 'stop', pid: process.pid, moduleFailures: policy.failureCounts() });
    await audit.flush();
  }, 'dsh-resilience: end waits and flush the audit log');
}

async function effortSupported(ctx, target, signal) {
  try {
    const info = await ctx.get('llm')?.resolveModelInfo(target.provider, target.model, signal);
    return Boolean(info?.reasoning?.efforts?.some((e) => e.id === target.reasoningEffort));
  } catch {
    return false;
  }
}
