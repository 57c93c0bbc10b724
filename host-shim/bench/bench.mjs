// `make bench` (Node side): per-decision latency through the shim's whole path
// (JSON encode, the kernel, the module, JSON decode) and memory across 10^6
// calls. The inputs are testhost's (testdata/bench-inputs.jsonl), so the
// numbers compare with the native and wazero benchmarks.
import { readFileSync } from 'node:fs';
import { compileModule, Engine as Policy } from '../engine.js';

const N = Number(process.env.BENCH_CALLS ?? 20_000);
const MEMORY_CALLS = Number(process.env.BENCH_MEMORY_CALLS ?? 1_000_000);
const CHAIN = [{ provider: 'bench', model: 'primary' }, { provider: 'bench', model: 'secondary' }];
const INPUTS = readFileSync(new URL('../../testhost/testdata/bench-inputs.jsonl', import.meta.url), 'utf8')
  .trim().split('\n').map((line) => JSON.parse(line));
const input = (i) => INPUTS[i % INPUTS.length];

const policy = new Policy(await compileModule(), { chain: CHAIN }, console);
for (let i = 0; i < 10_000; i++) policy.decide(input(i).nowMs, input(i).event); // warm-up: let V8 tier up

const samples = new Float64Array(N);
for (let i = 0; i < N; i++) {
  const { nowMs, event } = input(i);
  const s = process.hrtime.bigint();
  policy.decide(nowMs, event);
  samples[i] = Number(process.hrtime.bigint() - s);
}
samples.sort();
const pct = (p) => (samples[Math.min(N - 1, Math.floor(N * p))] / 1000).toFixed(1);
console.log(`node-shim decide: p50 ${pct(0.5)} µs  p99 ${pct(0.99)} µs  (n=${N}, Node ${process.version})`);

// The first forced full GC starts V8's parallel marking threads, whose malloc
// arenas add a one-time ~10-15 MB to RSS (seen in /proc/self/smaps as new
// anonymous arenas; the JS heap and the module's 8 MB memory stay flat). So
// that this does not pass for growth, GC once before the baseline, and
// measure 10^6 calls from the steady state after a warm-up.
global.gc?.();
const rssCold = process.memoryUsage().rss;
for (let i = 0; i < 500_000; i++) policy.decide(input(i).nowMs, input(i).event);
global.gc?.();
const mem0 = process.memoryUsage();
const wasm0 = policy.instance.memoryBytes;
console.log(`node-shim warm-up: rss ${(rssCold / 2 ** 20).toFixed(2)} → ${(mem0.rss / 2 ** 20).toFixed(2)} MB over the first 500k calls`);
const started = Date.now();
for (let i = 0; i < MEMORY_CALLS; i++) policy.decide(input(i).nowMs, input(i).event);
global.gc?.();
const mem1 = process.memoryUsage();
const mb = (x) => (x / 2 ** 20).toFixed(2);
console.log(`node-shim memory over ${MEMORY_CALLS} calls (${((Date.now() - started) / 1000).toFixed(1)} s): ` +
  `wasm ${mb(wasm0)} → ${mb(policy.instance.memoryBytes)} MB, rss ${mb(mem0.rss)} → ${mb(mem1.rss)} MB, ` +
  `js heap ${mb(mem0.heapUsed)} → ${mb(mem1.heapUsed)} MB`);
const growth = Math.max(policy.instance.memoryBytes - wasm0, mem1.rss - mem0.rss);
const grownOk = growth < 10 * 2 ** 20;
console.log(`node-shim growth: ${mb(growth)} MB (target < 10 MB): ${grownOk ? 'OK' : 'MISSED'}`);
if (!grownOk) process.exitCode = 1; // make bench fails on a missed target
if (Object.keys(policy.failureCounts()).length) console.log('module failures:', policy.failureCounts());
