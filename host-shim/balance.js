// @ts-check
// Balance scripts: one per provider, run through the host's subprocess
// service (argv, never a shell line) with the host's working directory. The
// credential named by apiKeyEnv is resolved through the host's credential
// service at every run and handed to the script under that name only; a
// name nothing is configured for adds no entry and warns, and the script
// still runs (it may find a key of its own, and its message is the better
// diagnostic). What the script printed is the module's to read
// (`balance-output`: a reading, a refusal, or a missing one); a script that
// gave no output to read is a missing reading, never an error. Its output
// is never logged: a reading carries the number, a missing one a short reason.

import { resolveSecret, serviceOf } from './secret.js';
import { balanceReadingEvent, missingReadingEvent } from './events.js';

/** Output beyond this is a missing reading: a balance is one small object. */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/** How long a timed-out script gets between SIGTERM and SIGKILL. */
const GRACE_MS = 500;

/** @import { EventBalanceReading } from './policy-types.js' */
/**
 * `why` and `warning` are for the audit log only.
 * @typedef {EventBalanceReading & {why?: string, warning?: string}} Reading
 */

/**
 * The module's reading of a script's stdout (WIT `balance-output`); undefined when the module failed.
 * @typedef {(provider: string, text: string) => import('./policy-types.js').BalanceOutput | undefined} ReadOutput
 */

const missing = missingReadingEvent;

/**
 * Runs one balance script and settles it into a WIT `balance-reading` event
 * (plus a `why` and a `warning` for the audit log, stripped before the module sees it).
 * @param {import('./host.js').Context} ctx - reaches the host's subprocess and credentials services.
 * @param {import('./policy-types.js').ResolvedBalance} b - the resolved balance config.
 * @param {AbortSignal} lifetime - the plugin's lifetime: dispose ends the run.
 * @param {ReadOutput} read - the module's reading of the output.
 * @returns {Promise<Reading>}
 */
export async function runBalance(ctx, b, lifetime, read) {
  const subprocess = await serviceOf(ctx, 'subprocess');
  if (!subprocess) return missing(b.provider, 'no subprocess service');
  /** @type {Record<string, string>} */
  const env = {};
  for (const e of b.env ?? []) env[e.name] = e.value;
  /** @type {string | undefined} */
  let warning;
  if (b.apiKeyEnv) {
    const credential = await resolveSecret(ctx, b.apiKeyEnv).catch(() => undefined);
    if (typeof credential === 'string' && credential !== '') env[b.apiKeyEnv] = credential;
    else warning = `credential ${b.apiKeyEnv} not found: the script runs without it`;
  }
  const reading = await runScript(subprocess, b, env, lifetime, read);
  return warning ? { ...reading, warning } : reading;
}

/**
 * @param {any} subprocess - the host's subprocess service
 * @param {import('./policy-types.js').ResolvedBalance} b
 * @param {Record<string, string>} env
 * @param {AbortSignal} lifetime
 * @param {ReadOutput} read
 * @returns {Promise<Reading>}
 */
async function runScript(subprocess, b, env, lifetime, read) {
  const deadline = AbortSignal.timeout(b.timeoutMs);
  const signal = AbortSignal.any([lifetime, deadline]);
  let handle;
  try {
    handle = subprocess.spawn({
      argv: b.script, cwd: process.cwd(), env, graceMs: GRACE_MS, signal,
      stdio: { stdin: 'ignore', stdout: { maxBytes: MAX_OUTPUT_BYTES }, stderr: { maxBytes: 1024 } },
    });
  } catch {
    return missing(b.provider, 'spawn failed');
  }
  const aborted = new Promise((resolve) => {
    if (signal.aborted) resolve(undefined);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  let outcome;
  try {
    outcome = await Promise.race([handle.done, aborted]);
  } catch {
    return missing(b.provider, 'spawn failed');
  }
  if (outcome === undefined || signal.aborted) {
    handle.terminate();
    return missing(b.provider, deadline.aborted ? 'timeout' : 'cancelled');
  }
  if (outcome.exitCode !== 0) return missing(b.provider, `exit ${outcome.exitCode ?? outcome.signal}`);
  const out = handle.collected.stdout?.readFrom(0);
  if (!out || out.lossy || out.nextOffset > MAX_OUTPUT_BYTES) return missing(b.provider, 'output too large');
  return readingOf(b.provider, out.text, read);
}

/**
 * The module's reading of a script's stdout, as the event it decides with.
 * @param {string} provider
 * @param {string} text
 * @param {ReadOutput} read
 * @returns {Reading}
 */
export function readingOf(provider, text, read) {
  const answer = read(provider, text);
  if (!answer) return missing(provider, 'policy module failed');
  const event = balanceReadingEvent(answer.reading);
  return answer.why ? { ...event, why: answer.why } : event;
}
