// The per-step latency of a 20-step task in the real host, stock retry
// settings, chain [primary, secondary], against a primary whose first token
// takes 20 s on one step in five (steps 1, 6, 11, 16), without `hedge`, with
// `hedge.afterMs: 2000` and the default budget (one session alone gets the
// floor: one hedge a minute), and with `budgetFloor: 20` (every slow step
// hedged). Prints the table RATIONALE.md's hedge section quotes.
//
//   make pack && node e2e/hedge-latency.mjs     (DSH_HOST_DIR set: source the env first)
//
// A step's latency is the time from its model request reaching the provider
// to the next step's (a tool call in between: `read` of a small file); the
// last step's runs to the host's exit. Measured, not asserted: a script, not a test.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

const STEPS = 20;
const SLOW_MS = 20_000;
const slow = (step) => step % 5 === 1;

async function run(fp, plugin) {
  fp.reset();
  const h = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], ...plugin }, primaryRetry: 'stock', secondaryRetry: 'stock', streamIdleTimeoutMs: 300_000 });
  try {
    const file = join(h.dir, 'home/notes.txt');
    await writeFile(file, 'nothing to see\n');
    const tool = (extra = {}) => ({ kind: 'tool_call', name: 'read', arguments: { file_path: file }, ...extra });
    const script = [];
    for (let step = 1; step <= STEPS; step++) {
      const last = step === STEPS;
      if (last) script.push({ kind: 'success', text: 'done' });
      else script.push(slow(step) ? tool({ delayMs: SLOW_MS }) : tool());
    }
    fp.script(PRIMARY.model, script, { repeatLast: false });
    // Only a hedge reaches the secondary: a slow step's answer, a tool call.
    fp.script(SECONDARY.model, [tool()]);
    const started = Date.now();
    const r = await runHeadless(h, 'Read notes.txt until told to stop', { timeoutMs: 600_000 });
    const ended = started + r.ms;
    if (r.stdout.trim() !== 'done') throw new Error(`the task did not finish: ${r.stdout} ${r.stderr} ${JSON.stringify(fp.requests.map((q) => [q.model, q.step, q.at - started]))}`);
    const asked = fp.requests.filter((q) => q.model === PRIMARY.model).map((q) => q.at);
    if (asked.length !== STEPS) throw new Error(`${asked.length} primary requests for ${STEPS} steps`);
    const hedged = fp.requests.filter((q) => q.model === SECONDARY.model).length;
    return { steps: asked.map((at, i) => (asked[i + 1] ?? ended) - at), total: ended - asked[0], hedged };
  } finally {
    await h.cleanup();
  }
}

const fp = await startFakeProvider({});
try {
  const without = await run(fp, {});
  const budget = await run(fp, { hedge: { afterMs: 2000 } });
  const all = await run(fp, { hedge: { afterMs: 2000, budgetFloor: 20 } });
  const runs = [without, budget, all];
  const s = (ms) => (ms / 1000).toFixed(1).padStart(9);
  console.log('| step | first token | no hedge (s) | hedge, default budget (s) | hedge, budgetFloor 20 (s) |');
  console.log('|---:|---|---:|---:|---:|');
  const row = (a, b, xs) => console.log(`| ${a} | ${b} | ${xs.map(s).join(' | ')} |`);
  for (let i = 0; i < STEPS; i++) row(i + 1, slow(i + 1) ? '20 s' : 'at once', runs.map((r) => r.steps[i]));
  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  row('mean', '', runs.map((r) => mean(r.steps)));
  row('max', '', runs.map((r) => Math.max(...r.steps)));
  row('task', '', runs.map((r) => r.total));
  console.log(`| hedges (secondary requests) | | ${runs.map((r) => r.hedged).join(' | ')} |`);
} finally {
  await fp.close();
}
