// `make demo`: the real DSH host, headless, with dsh-resilience installed,
// against the project's fake provider scripted to fail. It prints, as it
// happens, what the provider answered, what the host did, what the plugin
// decided and why, and the answer the task printed. The host runs its stock
// retry settings (no retryPolicy anywhere: what a user has after `dsh plugin
// add`), so what it prints is what a user gets; only the stall limit is
// shortened, and the screen says so.
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless, SECONDARY, sessionEvents } from './harness.mjs';
import { POLICY_KEY } from '../host-shim/retry-events.js';

const tty = process.stdout.isTTY;
const paint = (code, s) => (tty ? `\x1b[${code}m${s}\x1b[0m` : s);
const bold = (s) => paint(1, s);
const red = (s) => paint(31, s);
const green = (s) => paint(32, s);
const yellow = (s) => paint(33, s);
const dim = (s) => paint(2, s);
const name = (c) => `${c.provider}/${c.model}`;

const SCENARIOS = [
  {
    title: 'Primary rate-limited (429) on every request',
    primary: ['rate_limit'],
    note: 'the host retries once (stock: 5 retries, 0.5 s doubling); at the request\'s second failure dsh-resilience sends its next attempt to the secondary at once (spillAfter 2), without the rest of the host\'s budget, and one request\'s failures leave the primary closed',
  },
  {
    title: 'Primary answers 500, 500, then ok',
    primary: ['server_error', 'server_error', 'success'],
    note: 'a blip: the host retries the first 500; the second sends that attempt to the secondary at once (a spill), the primary stays closed and the next request goes back to it',
  },
  {
    title: 'Primary out of balance (402 "Insufficient Balance")',
    primary: ['insufficient_balance'],
    note: 'a spent balance will not come back in seconds: dsh-resilience fails over at once, no retries wasted',
  },
  {
    title: 'Primary accepts the connection, then says nothing',
    primary: ['hang'],
    plugin: { stall: { firstChunkMs: 5000 } },
    note: 'the stock host waits 300 s per attempt; the stall watchdog cuts the silent attempt after 5 s (DEMO SETTING: the default stall.firstChunkMs is 180 s), and the first cut fails over',
  },
];

async function runScenario(fp, s) {
  fp.reset();
  fp.script(PRIMARY.model, s.primary);
  fp.script(SECONDARY.model, [{ kind: 'success', text: `Hello from ${name(SECONDARY)}: the task finished.` }]);
  const home = await makeHome({
    baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], ...s.plugin },
    primaryRetry: 'stock', secondaryRetry: 'stock', streamIdleTimeoutMs: 300_000,
  });
  console.log(`\n${bold('▶ ' + s.title)}`);
  console.log(dim(`  chain: ${name(PRIMARY)} (primary) → ${name(SECONDARY)}; ${s.note}`));
  const t0 = Date.now();
  const stamp = () => dim(`[+${((Date.now() - t0) / 1000).toFixed(2)}s]`);
  fp.onRequest = (r) => {
    const ok = r.step === 'success';
    console.log(`${stamp()} provider  ${r.model.padEnd(18)} ← request → ${ok ? green('200 ' + r.step) : red(r.step)}`);
  };
  const seen = { audit: 0, retries: 0 };
  const poll = async () => {
    const retries = (await sessionEvents(home)).filter((e) => e.type === 'llm/retry');
    for (const e of retries.slice(seen.retries)) {
      // The host's own rows name its budget; the plugin's (a spill, a wait) carry its policy key.
      const who = e.data.policyKey === POLICY_KEY ? 'plugin' : 'host  ';
      const of = e.data.maxRetries === undefined ? '' : `/${e.data.maxRetries}`;
      console.log(`${stamp()} ${who}    llm-retry #${e.data.retry}${of} on ${e.data.provider} after ${e.data.failure.code}, waiting ${Math.round(e.data.delayMs)} ms`);
    }
    seen.retries = retries.length;
    const audit = await auditRecords(home);
    for (const a of audit.slice(seen.audit)) {
      if (a.type === 'circuit-open') console.log(`${stamp()} plugin    ${yellow('circuit OPEN')} ${name(a.channel)}: ${a.cause} (class ${a.class}) until ${a.openUntil.slice(11, 19)}`);
      if (a.type === 'spill') console.log(`${stamp()} plugin    ${yellow('SPILL')} ${name(a.from)} → ${name(a.to)} after ${bold(a.code)}: this attempt only, the primary stays closed`);
      if (a.type === 'failover') console.log(`${stamp()} plugin    ${yellow('FAILOVER')} ${name(a.from)} → ${name(a.to)}, reason ${bold(a.code)} (${a.class})`);
      if (a.type === 'give-up') console.log(`${stamp()} plugin    gave up on ${name(a.channel)}: ${a.reason} (${a.code})`);
      if (a.type === 'stall') console.log(`${stamp()} plugin    ${yellow('STALL CUT')} ${name(a.route)}: no output for ${(a.silenceMs / 1000).toFixed(1)} s, connection closed`);
    }
    seen.audit = audit.length;
  };
  const ticker = setInterval(() => { poll().catch(() => {}); }, 50);
  const r = await runHeadless(home, 'Say hello and finish the task.');
  clearInterval(ticker);
  await poll();
  const counts = fp.counts();
  console.log(`${stamp()} task exited ${r.code === 0 ? green('0') : red(String(r.code))}; answer: ${bold(JSON.stringify(r.stdout.trim()))}`);
  console.log(dim(`  requests the provider saw: ${Object.entries(counts).map(([m, n]) => `${m} ×${n}`).join(', ')}`));
  if (r.code !== 0) console.log(red(r.stderr));
  await home.cleanup();
  return r.code === 0;
}

const fp = await startFakeProvider({ onRequest: (r) => fp?.onRequest?.(r) });
console.log(bold('dsh-resilience demo') + dim(' — the real DSH host (dsh --profile headless), a fake provider on ' + fp.baseURL));
console.log(dim('  host retries: stock dsh-llm-retry (mode normal, 5 retries, 0.5 s doubling to 10 s); everything else default unless a scenario says so'));
let ok = true;
try {
  for (const s of SCENARIOS) ok = (await runScenario(fp, s)) && ok;
} finally {
  await fp.close();
}
console.log(ok ? green('\nEvery task finished despite a failing primary.') : red('\nA task failed.'));
process.exitCode = ok ? 0 : 1;
