// `make bench` (hedge): the hedge budget under load, through the shim's real
// stream wrapper (stall.js) and the real module, on a virtual clock. Fifty
// agents send request after request to a primary whose first token takes
// 20 s, with `hedge.afterMs` 2000 and the default budget (5 % of the
// provider's requests per minute, plus 1); the secondary answers in 0.5 s.
//
// Targets (exit status 1 when one is missed):
//   - the budget: at every hedge, the hedges of the 50 s before it are at
//     most budgetFloor + budgetPercent % of the primary's requests in the
//     60 s before it (the module counts in 10 s slots over a minute);
//   - one answer per request: every request's chunks come from one call,
//     and the other call of a hedged request was aborted;
//   - hedges do happen (a budget that never lets one through passes the first).
import { compileModule, Engine as Policy } from '../engine.js';
import { carryOut } from '../effects.js';
import { StallWatcher } from '../stall.js';

const AGENTS = Number(process.env.HEDGE_AGENTS ?? 50);
const MINUTES = Number(process.env.HEDGE_MINUTES ?? 10);
const PRIMARY = { provider: 'slow', model: 'primary' };
const SECONDARY = { provider: 'fast', model: 'secondary' };
const SLOW_MS = 20_000;
const FAST_MS = 500;
const ROW = { chain: [PRIMARY, SECONDARY], hedge: { afterMs: 2000 } };
const quiet = { info() {}, warn() {} };

// The virtual clock: timers in a list ordered by time; microtasks drained after each.
let now = 1_000_000;
/** @type {{at: number, fn: () => void, seq: number, dead?: boolean}[]} */
let queue = [];
let seq = 0;
const timers = {
  set: (fn, ms) => { const t = { at: now + Math.max(0, ms), fn, seq: seq++ }; queue.push(t); return t; },
  clear: (t) => { if (t) t.dead = true; },
};
const drain = async () => { for (let i = 0; i < 4; i++) await new Promise((r) => setImmediate(r)); };

const policy = new Policy(await compileModule(), ROW, quiet);
const audit = [];
const env = { ctx: { emit() {} }, audit: { write: (r) => audit.push({ ...r, t: now }) }, logger: quiet, healthChanged() {}, scheduleWake() {}, probe() {} };
const decide = (event) => {
  const out = policy.decide(now, event);
  if (out) carryOut(out.effects, env);
  return out?.verdict;
};

/** One provider call: its first (and only) text chunk, then a stop, after its provider's time; aborting closes it. */
class FakeCall {
  constructor(options) {
    this.options = options;
    this.aborted = false;
    this.ready = false;
    options.signal.addEventListener('abort', () => { this.aborted = true; this.wake?.(); }, { once: true });
    timers.set(() => { this.ready = true; this.wake?.(); }, options.provider === PRIMARY.provider ? SLOW_MS : FAST_MS);
  }
  async *[Symbol.asyncIterator]() {
    while (!this.ready && !this.aborted) await new Promise((r) => { this.wake = r; });
    if (this.aborted) {
      yield { type: 'finish', reason: { kind: 'aborted', failure: { code: 'ABORTED', message: 'aborted' } } };
      return;
    }
    yield { type: 'text-delta', index: 0, text: `${this.options.provider}#${this.id}` };
    yield { type: 'finish', reason: { kind: 'stop' } };
  }
}

const calls = [];
const watcher = new StallWatcher({
  decide,
  llm: () => ({ stream: (copy) => { const c = new FakeCall(copy); c.id = calls.length; c.sentAt = now; calls.push(c); return c; } }),
  wall: () => now, mono: () => now, timers,
});

const requests = []; // [time, agent] of each request to the primary
let missed = 0;
const miss = (what) => { if (missed++ < 5) console.log(`hedge bench MISSED: ${what}`); };

/** One agent: request after request, each read to its end; every answer must come from one call. */
async function agent(id) {
  const end = 1_000_000 + MINUTES * 60_000;
  while (now < end) {
    const v = decide({ kind: 'request', agent: id, proposed: PRIMARY });
    const route = v?.kind === 'swap' ? { provider: v.provider, model: v.model } : PRIMARY;
    if (route.provider === PRIMARY.provider) requests.push(now);
    const first = calls.length;
    const texts = [];
    for await (const chunk of watcher.wrap(Object.freeze({ ...route, messages: [], sessionId: id, signal: new AbortController().signal }), () => { throw new Error('unwatched'); })) {
      if (chunk.type === 'text-delta') texts.push(chunk.text);
    }
    const mine = calls.slice(first).filter((c) => c.options.sessionId === id);
    if (texts.length !== 1) miss(`${id}: ${texts.length} answers reached the session`);
    if (mine.length === 2 && mine.filter((c) => c.aborted).length !== 1) miss(`${id}: a hedged request's loser was not aborted`);
    decide({ kind: 'settled', agent: id });
  }
}

const started = performance.now();
const running = Promise.all(Array.from({ length: AGENTS }, (_, i) => agent(`agent-${i}`)));
let done = false;
running.then(() => { done = true; });
await drain();
while (!done) {
  queue = queue.filter((t) => !t.dead);
  if (queue.length === 0) { await drain(); if (!done) { console.log('hedge bench: nothing left to run'); missed++; } break; }
  queue.sort((a, b) => a.at - b.at || a.seq - b.seq);
  const t = queue.shift();
  now = Math.max(now, t.at);
  t.fn();
  await drain();
}

// The budget, at every hedge sent (the module's decision time).
const hedges = audit.filter((r) => r.type === 'hedge');
// Every call to the secondary is a hedge here (the primary never fails): sent when the module said so.
const hedgeTimes = calls.filter((c) => c.options.provider === SECONDARY.provider).map((c) => c.sentAt);
if (hedgeTimes.length !== hedges.length) miss(`${hedgeTimes.length} hedges sent, ${hedges.length} audited`);
let worst = 0;
for (const t of hedgeTimes) {
  const inBudget = hedgeTimes.filter((x) => x > t - 50_000 && x <= t).length;
  const reqs = requests.filter((x) => x > t - 60_000 && x <= t).length;
  const allowed = 1 + Math.floor(reqs * 5 / 100);
  worst = Math.max(worst, inBudget / allowed);
  if (inBudget > allowed) miss(`${inBudget} hedges in 50 s against ${reqs} requests in 60 s (budget ${allowed})`);
}
const won = hedges.filter((h) => h.winner === 'hedge').length;
console.log(`hedge bench: ${AGENTS} agents, ${MINUTES} virtual min: ${requests.length} primary requests, ${hedges.length} hedges ` +
  `(${won} won), ${(hedges.length / MINUTES).toFixed(1)} hedges/min against ${(requests.length / MINUTES).toFixed(1)} requests/min; ` +
  `worst window ${(worst * 100).toFixed(0)} % of its budget; ${(performance.now() - started).toFixed(0)} ms wall`);
if (hedges.length === 0) miss('no hedge was ever sent');
console.log(`hedge bench: ${missed ? `${missed} target(s) MISSED` : 'OK'}`);
if (missed) process.exitCode = 1;
