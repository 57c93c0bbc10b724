// `make bench` (Node side): per-decision latency through the shim's whole path
// (JSON encode, the kernel, the module, JSON decode) and memory across 10^6
// calls. The event cycle is the one testhost's Go benchmarks use, so the
// numbers compare: request → request-error (transient, before-host: defer)
// → settled, over 16 agents, time advancing 1 ms per event.
import { compileModule, Policy } from '../policy.js';

const CHAIN = [{ provider: 'bench', model: 'primary' }, { provider: 'bench', model: 'secondary' }];
const N = Number(process.env.BENCH_CALLS ?? 20_000);
const MEMORY_CALLS = Number(process.env.BENCH_MEMORY_CALLS ?? 1_000_000);

export function benchEvent(i) {
  const agent = `agent-${(i / 3 | 0) % 16}`;
  switch (i % 3) {
    case 0: return { kind: 'request', agent, proposed: CHAIN[0] };
    case 1: return { kind: 'request-error', agent, provider: 'bench', phase: 'before-host', rand: (i * 2654435761) % 2 ** 53,
      failure: { code: 'RATE_LIMIT', message: 'Rate limit reached for requests', status: 429 } };
    default: return { kind: 'settled', agent };
  }
}

const policy = new Policy(await compileModule(), { chain: CHAIN }, console);
const t0 = 1_000_000;
for (let i = 0; i < 10_000; i++) policy.decide(t0 + i, benchEvent(i)); // warm-up: let V8 tier up

const samples = new Float64Array(N);
for (let i = 0; i < N; i++) {
  const ev = benchEvent(i);
  const s = process.hrtime.bigint();
  policy.decide(t0 + 10_000 + i, ev);
  samples[i] = Number(process.hrtime.bigint() - s);
}
samples.sort();
const pct = (p) => (samples[Math.min(N - 1, Math.floor(N * p))] / 1000).toFixed(1);
console.log(`node-shim decide: p50 ${pct(0.5)} µs  p99 ${pct(0.99)} µs  (n=${N}, Node ${process.version})`);

// RSS steps up once in the first ~200k calls (V8 optimises the hot path and
// the Go guest touches the rest of its 8 MB of wasm pages), then stays flat:
// growth is measured from that steady state, and the warm-up step is shown.
const rssCold = process.memoryUsage().rss;
for (let i = 0; i < 200_000; i++) policy.decide(t0 + 50_000 + i, benchEvent(i));
global.gc?.();
const mem0 = process.memoryUsage();
const wasm0 = policy.instance.memoryBytes;
console.log(`node-shim warm-up: rss ${(rssCold / 2 ** 20).toFixed(2)} → ${(mem0.rss / 2 ** 20).toFixed(2)} MB over the first 200k calls`);
const started = Date.now();
for (let i = 0; i < MEMORY_CALLS; i++) policy.decide(t0 + 300_000 + i, benchEvent(i));
global.gc?.();
const mem1 = process.memoryUsage();
const mb = (x) => (x / 2 ** 20).toFixed(2);
console.log(`node-shim memory over ${MEMORY_CALLS} calls (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
  `wasm ${mb(wasm0)} → ${mb(policy.instance.memoryBytes)} MB, rss ${mb(mem0.rss)} → ${mb(mem1.rss)} MB, ` +
  `js heap ${mb(mem0.heapUsed)} → ${mb(mem1.heapUsed)} MB`);
const growth = Math.max(policy.instance.memoryBytes - wasm0, mem1.rss - mem0.rss);
console.log(`node-shim growth: ${mb(growth)} MB (target < 10 MB): ${growth < 10 * 2 ** 20 ? 'OK' : 'OVER'}`);
if (Object.keys(policy.failureCounts()).length) console.log('module failures:', policy.failureCounts());
