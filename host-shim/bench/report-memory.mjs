// `make bench` (the report's memory): the host's memory over repeated
// reports must stay flat. Once, about 20 `/resilience report` calls took a
// host from 174 to 458 MB: each call parsed the whole log into JS objects
// and a module instance stayed alive with them. The report now streams the
// log in batches into a short-lived module instance (report-logs.js).
//
// A worst week's log (failovers, give-ups, stream checks, probes and waits
// across 200 agents, 200k records, both generations) is reported REPORTS
// (20) times by a real web host, through its `report` endpoint as the
// page calls it. Target (exit 1 on a miss): the host's RSS over the last
// five reports is within 64 MB of its RSS over the first five (medians: the
// host collects when it likes), and every report answers the same numbers. BENCH_REPORT_PROCESS=1 runs the reports in this process instead
// (reportData, without the host), to tell the two apart.
import { mkdir, open, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { reportData } from '../report-command.js';
import { startFakeProvider } from '../../e2e/fake-provider/fake-provider.mjs';
import { makeWebHome, PRIMARY, SECONDARY, startWeb } from '../../e2e/web/web-harness.mjs';

const REPORTS = Number(process.env.BENCH_REPORTS ?? 20);
const LINES = Number(process.env.BENCH_REPORT_LINES ?? 200_000);
const TARGET_MB = 64;
const IN_PROCESS = process.env.BENCH_REPORT_PROCESS === '1';
if (IN_PROCESS && typeof globalThis.gc !== 'function') throw new Error('run with node --expose-gc');

const fp = await startFakeProvider({});
const home = await makeWebHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], probes: false } });
const dir = join(home.dsh, 'dsh-resilience');
await mkdir(dir, { recursive: true });
const audit = join(dir, 'audit.jsonl');
const now = Date.now();
const ch = (i) => ({ provider: ['deepseek-official', 'mock', 'openrouter/eu'][i % 3], model: ['deepseek-v4-flash', 'mock-a', 'claude/sonnet-4.5'][(i >> 2) % 3] });
const iso = (ms) => new Date(ms).toISOString();

/** One generation of the log: LINES/2 records over its half of the week. */
async function writeLog(path, fromMs, toMs) {
  const f = await open(path, 'w');
  const n = LINES / 2;
  let buf = '';
  for (let i = 0; i < n; i++) {
    const at = iso(fromMs + Math.floor((toMs - fromMs) * i / n));
    const agent = `agent-${i % 200}`;
    let r;
    switch (i % 10) {
      case 0: r = { at, type: 'failover', agent, from: ch(i), to: ch(i + 1), code: 'RATE_LIMIT', class: 'transient', failovers: 1, maxFailovers: 4 }; break;
      case 1: r = { at, type: 'circuit-open', channel: ch(i), from: 'closed', cause: 'threshold', class: 'transient', openUntil: iso(Date.parse(at) + 60_000) }; break;
      case 2: r = { at, type: 'circuit-closed', channel: ch(i), from: 'half-open', cause: 'probe' }; break;
      case 3: r = { at, type: 'give-up', agent, channel: ch(i), reason: 'budget-exhausted', code: 'QUOTA', tried: [{ channel: ch(i), code: 'QUOTA' }, { channel: ch(i + 1), code: 'QUOTA' }] }; break;
      case 4: r = { at, type: 'retry', agent, channel: ch(i), attempt: 2, delayMs: 1500, code: 'SERVER' }; break;
      case 5: r = { at, type: 'stall', route: ch(i), bound: 'first-chunk', silenceMs: 180_004, limitMs: 180_000, chunks: 0 }; break;
      case 6: r = { at, type: 'stream-check', channel: ch(i), firstTokenMs: 300 + (i % 5000), chunks: 40 }; break;
      case 7: r = { at, type: 'probe', channel: ch(i) }; break;
      case 8: r = { at, type: 'return', agent, from: 'mock/mock-a', to: 'deepseek-official/deepseek-v4-flash' }; break;
      default: r = { at, type: 'spill', agent, from: ch(i), to: ch(i + 2), code: 'RATE_LIMIT', failures: 2 };
    }
    buf += `${JSON.stringify(r)}\n`;
    if (buf.length > 1 << 20) { await f.write(buf); buf = ''; }
  }
  await f.write(buf);
  await f.close();
}
const week = 7 * 86_400_000;
await writeLog(`${audit}.1`, now - week, now - week / 2);
await writeLog(audit, now - week / 2, now);

const web = IN_PROCESS ? undefined : await startWeb(home);
/** The resident set: this process's after a GC, or the host's. */
async function rssMb() {
  if (IN_PROCESS) { globalThis.gc(); return process.memoryUsage().rss / 2 ** 20; }
  const status = await readFile(`/proc/${web.child.pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}
let rpc = 0;
/** One report, as the page asks for it. */
async function report() {
  if (IN_PROCESS) return reportData(audit, '8d', now);
  const res = await fetch(`${new URL(web.url).origin}/dsh-resilience/report`, {
    method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId: `r${++rpc}`, method: 'report', payload: { window: '8d' } }),
  });
  const answer = JSON.parse(await res.text()).result;
  return answer?.ok ? answer.value ?? answer.data ?? answer : { error: JSON.stringify(answer).slice(0, 300) };
}
/** @type {number[]} */
const rss = [];
let first;
let same = true;
const started = Date.now();
try {
  for (let i = 1; i <= REPORTS; i++) {
    const out = await report();
    if (out.error || !out.report) throw new Error(`report ${i}: ${out.error ?? `no report in ${JSON.stringify(out).slice(0, 300)}`}`);
    // The window moves with the clock, the log does not (it ends when the bench began, and the 8-day window holds all of it).
    // The host appends its own records to the live log as it runs: `records` moves, these do not.
    const { skipped, incidents, giveUps, channels } = out.report;
    const text = JSON.stringify({ skipped, incidents: incidents.length, giveUps: giveUps.length, channels: channels.length });
    first ??= text;
    same &&= text === first;
    rss.push(await rssMb());
    if (process.env.BENCH_REPORT_TRACE) console.log(i, text, rss.at(-1).toFixed(1));
  }
  // The host collects when it likes: consecutive readings swing by ~30 MB, so
  // the medians of the first five and the last five are compared.
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const settled = median(rss.slice(0, 5));
  const end = median(rss.slice(-5));
  const ok = same && end - settled <= TARGET_MB;
  console.log(`report memory (${IN_PROCESS ? 'this process' : 'the web host'}): ${REPORTS} reports of a ${LINES}-record week (${((Date.now() - started) / REPORTS).toFixed(0)} ms each): ` +
    `rss ${settled.toFixed(1)} MB over the first 5 (median), ${end.toFixed(1)} MB over the last 5 (target: within ${TARGET_MB} MB; same numbers each time: ${same}): ${ok ? 'OK' : 'MISSED'}`);
  if (!ok) process.exitCode = 1;
} finally {
  await web?.stop();
  await fp.close();
  await home.cleanup();
}
