// @ts-check
// Balance scripts: one per provider, run through the host's subprocess
// service (argv, never a shell line) with the host's working directory. The
// credential named by apiKeyEnv is resolved through the host's credential
// service at every run and handed to the script under that name only. The
// script prints one JSON object `{"remaining": n, "resetsAt"?: iso}`;
// anything else is a missing reading, never an error. Its output is never
// logged: a reading carries the number, a missing one a short reason.

import { resolveSecret, serviceOf } from './secret.js';
import { balanceReadingEvent, missingReadingEvent } from './events.js';

/** Output beyond this is a missing reading: a balance is one small object. */
export const MAX_OUTPUT_BYTES = 64 * 1024;
/** How long a timed-out script gets between SIGTERM and SIGKILL. */
const GRACE_MS = 500;

/** @import { EventBalanceReading } from './policy-types.js' */
/** @typedef {EventBalanceReading & {why?: string}} Reading - `why` is for the audit log only. */

const missing = missingReadingEvent;

/**
 * Runs one balance script and settles it into a WIT `balance-reading` event
 * (plus a `why` for the audit log, stripped before the module sees it).
 * @param {import('./host.js').Context} ctx - reaches the host's subprocess and credentials services.
 * @param {import('./policy-types.js').ResolvedBalance} b - the resolved balance config.
 * @param {AbortSignal} lifetime - the plugin's lifetime: dispose ends the run.
 * @returns {Promise<Reading>}
 */
export async function runBalance(ctx, b, lifetime) {
  const subprocess = await serviceOf(ctx, 'subprocess');
  if (!subprocess) return missing(b.provider, 'no subprocess service');
  /** @type {Record<string, string>} */
  const env = {};
  for (const e of b.env ?? []) env[e.name] = e.value;
  if (b.apiKeyEnv) {
    const credential = await resolveSecret(ctx, b.apiKeyEnv).catch(() => undefined);
    if (typeof credential !== 'string' || credential === '') return missing(b.provider, 'credential not found');
    env[b.apiKeyEnv] = credential;
  }
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
  return parseReading(b.provider, out.text);
}

/**
 * The script's stdout as a reading; anything but the one documented object is missing.
 * @param {string} provider
 * @param {string} text
 * @returns {Reading}
 */
export function parseReading(provider, text) {
  let v;
  try {
    v = JSON.parse(text);
  } catch {
    return missing(provider, 'not JSON');
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v) || typeof v.remaining !== 'number' || !Number.isFinite(v.remaining)) {
    return missing(provider, 'no numeric remaining');
  }
  if (v.resetsAt === undefined) return balanceReadingEvent(provider, v.remaining);
  const at = typeof v.resetsAt === 'string' ? Date.parse(v.resetsAt) : NaN;
  if (!Number.isFinite(at) || at < 0) return missing(provider, 'bad resetsAt');
  return balanceReadingEvent(provider, v.remaining, at);
}
