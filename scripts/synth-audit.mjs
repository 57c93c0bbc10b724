#!/usr/bin/env node
// A multi-hour audit log from the real policy module, for the report's
// picture and docs: agents run turns against a scripted world of outages on a
// virtual clock; every decision is the wasm module's own (host-shim/engine.js)
// and every record is the shim's own (effects.js), stamped with virtual time.
// The host's part is played as the stock host plays it: dsh-llm-retry's
// defaults (5 retries, 0.5 s doubling to 10 s), then the plugin after it.
//   node scripts/synth-audit.mjs [--hours 6] [--seed 7] > audit.jsonl
// Needs build/dsh-resilience.wasm (`make wasm`).
import { compileModule, Engine as Policy } from '../host-shim/engine.js';
import { carryOut } from '../host-shim/effects.js';

const arg = (name, dflt) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const HOURS = arg('--hours', 6);
let seed = arg('--seed', 7);
const rand = () => { // mulberry32: the same log for the same seed
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
const between = (a, b) => a + rand() * (b - a);

const T0 = Date.parse('2026-11-30T22:00:00Z');
const H = 3600_000;
const MIN = 60_000;
const PRO = { provider: 'deepseek-official', model: 'deepseek-v4-pro' };
const FLASH = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const QWEN = { provider: 'openrouter', model: 'qwen3-coder' };
const CHAIN = [PRO, FLASH, QWEN];
// The night's outages: [provider, model ('*' for all), from, to, failure, share of requests failing].
const OUTAGES = [
  ['deepseek-official', 'deepseek-v4-pro', 0.6 * H, 0.85 * H, { code: 'RATE_LIMIT', status: 429, message: 'Rate limit reached for requests' }, 1],
  ['deepseek-official', '*', 2.1 * H, 2.8 * H, { code: 'SERVER', status: 503, message: 'Service Unavailable' }, 0.95],
  ['openrouter', 'qwen3-coder', 2.9 * H, 3.5 * H, { code: 'QUOTA', status: 402, message: 'Insufficient credits' }, 1],
  ['deepseek-official', 'deepseek-v4-pro', 4.2 * H, 4.32 * H, { code: 'TRANSPORT', message: 'socket hang up' }, 0.9],
  ['deepseek-official', '*', 5.1 * H, 5.3 * H, { code: 'SERVER', status: 500, message: 'Internal Server Error' }, 1],
  ['openrouter', 'qwen3-coder', 5.05 * H, 5.4 * H, { code: 'TRANSPORT', message: 'connect ECONNREFUSED' }, 1],
];
const failureAt = (ch, t) => {
  for (const [p, m, from, to, failure, share] of OUTAGES) {
    if (p === ch.provider && (m === '*' || m === ch.model) && t >= T0 + from && t < T0 + to && rand() < share) return failure;
  }
  return undefined;
};
const TTFT = { 'deepseek-v4-pro': [0.7, 2.6], 'deepseek-v4-flash': [0.3, 1.1], 'qwen3-coder': [0.5, 1.8] };
const STOCK = { mode: 'normal', retryableCodes: ['EMPTY_RESPONSE', 'RATE_LIMIT', 'SERVER', 'TIMEOUT', 'TRANSPORT'], maxRetries: 5 };

// The virtual clock and its queue of [atMs, fn].
let now = T0;
const queue = [];
const at = (t, fn) => {
  const ms = Math.round(t); // the module takes whole milliseconds
  let lo = 0;
  let hi = queue.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (queue[mid][0] <= ms) lo = mid + 1;
    else hi = mid;
  }
  queue.splice(lo, 0, [ms, fn]);
};

const out = [];
const write = (record) => { out.push(JSON.stringify({ at: new Date(now).toISOString(), ...record })); };
const audit = { write, flush: async () => {} };
const quiet = { info() {}, warn() {} };
const policy = new Policy(await compileModule(), { chain: CHAIN }, quiet, write, write);
let wakeAt = 0;
const env = {
  ctx: { emit() {} }, audit, logger: quiet,
  scheduleWake(ms) {
    wakeAt = ms;
    if (ms > 0) at(ms, () => { if (wakeAt === ms) decide({ kind: 'wake' }); });
  },
  probe(channel) {
    at(now + between(300, 1500), () => {
      const failure = failureAt(channel, now);
      write({ type: 'probe-result', channel, ok: !failure, code: failure?.code, ms: 600 });
      decide(failure ? { kind: 'probe-result', channel, ok: false, failure } : { kind: 'probe-result', channel, ok: true });
    });
  },
  healthChanged() {},
};
function decide(event) {
  const o = policy.decide(now, event);
  if (o) carryOut(o.effects, env);
  return o;
}

write({ type: 'boot', pid: 4242, chain: CHAIN, toolRetry: [], pools: [], balances: [] });
decide({ kind: 'wake' });

let sessions = 0;
const host = seed; // sessions of different seeds (hosts) never share an id
const newSession = () => `session-${host.toString(16)}-${(0x5e551000 + ++sessions).toString(16)}`;

/** One agent slot: turns of several steps, idle between, a new session now and then. */
function agentLoop(home) {
  let id = newSession();
  let hostRetries = 0;
  let turnsLeftInSession = Math.ceil(between(1, 5));
  const startTurn = () => {
    if (now > T0 + HOURS * H - 5 * MIN) return;
    step(Math.ceil(between(3, 14)));
  };
  const endTurn = () => {
    decide({ kind: 'settled', agent: id });
    if (--turnsLeftInSession === 0) {
      decide({ kind: 'disposed', agent: id });
      id = newSession();
      turnsLeftInSession = Math.ceil(between(1, 5));
    }
    at(now + between(1, 12) * MIN, startTurn);
  };
  const step = (left) => {
    const o = decide({ kind: 'request', agent: id, proposed: home });
    const target = o?.verdict?.kind === 'swap' ? { provider: o.verdict.provider, model: o.verdict.model } : home;
    const opened = now;
    decide({ kind: 'stream-check', channel: target, openedMs: opened, chunks: 0, cancelled: false });
    const failure = failureAt(target, now);
    const [lo, hi] = TTFT[target.model];
    const first = Math.round(opened + (failure ? between(80, 600) : between(lo, hi) * 1000));
    at(first, () => {
      decide({ kind: 'stream-check', channel: target, openedMs: opened, chunks: 1, cancelled: false, lastChunkMs: first });
      if (!failure) {
        hostRetries = 0;
        at(now + between(6, 40) * 1000, () => (left > 1 ? step(left - 1) : endTurn()));
        return;
      }
      failed(target, failure, left);
    });
  };
  // dsh-llm-retry's place in the waterfall: the plugin first (it may defer), then the host, then the plugin again.
  const failed = (target, failure, left) => {
    const ev = (phase) => ({ kind: 'request-error', agent: id, provider: target.provider, failure, phase, rand: Math.floor(rand() * 2 ** 52), hostRetry: STOCK });
    let o = decide(ev('before-host'));
    if (o?.verdict?.kind === 'defer') {
      if (STOCK.retryableCodes.includes(failure.code) && hostRetries < STOCK.maxRetries) {
        const delay = Math.min(500 * 2 ** hostRetries, 10_000) * between(0.9, 1.1);
        hostRetries++;
        at(now + delay, () => step(left));
        return;
      }
      o = decide(ev('after-host'));
    }
    switch (o?.verdict?.kind) {
      case 'retry':
        hostRetries = 0;
        at(now + 20, () => step(left));
        return;
      case 'wait':
        at(now + o.verdict.delayMs, () => step(left));
        return;
      default: // delegate: the turn ends on its failure
        hostRetries = 0;
        endTurn();
    }
  };
  at(now + between(0, 10) * MIN, startTurn);
}

for (let i = 0; i < 9; i++) agentLoop(i === 8 ? FLASH : PRO);
while (queue.length > 0) {
  const [ms, fn] = queue.shift();
  if (ms > T0 + HOURS * H) break;
  now = ms;
  fn();
}
write({ type: 'stop', pid: 4242, moduleFailures: {} });
process.stdout.write(out.join('\n') + '\n');
