// A one-line notice on stderr when a headless run switches channel (a
// failover, or one request's spill) or gives up: headless users read stderr (the host prints its own `dsh: CODE: message`
// there), and dsh-model-failover's users had a switch notice (`notifyUser`).
// Off with the shim key `notice: false`. The web profile shows the same as
// inline rows (client/rows.cjs), so it prints nothing there.
//
// Headless is told by the host's one-shot task service (`headlessStartup`,
// provided by dsh-headless), looked up when a notice is due: the only
// profile-level fact a plugin can read.

import { channelText } from './channel.js';

/** @import { Channel } from './policy-types.js' */

/**
 * The fields of a failover, spill or give-up audit record a notice reads
 * (effect-audit.js writes them).
 * @typedef {object} NoticedRecord
 * @property {string} [type]
 * @property {Channel} [from]
 * @property {Channel} [to]
 * @property {Channel} [channel]
 * @property {string} [code]
 * @property {string} [reason]
 * @property {number} [failures]
 * @property {number} [failovers]
 * @property {number} [maxFailovers]
 * @property {number} [turn]
 * @property {number} [step]
 */

/** @type {Record<string, string>} */
const GIVE_UP_WHY = {
  'no-routable-fallback': 'no channel to fail over to',
  'not-recoverable': 'not a channel fault',
  'budget-exhausted': 'failover budget spent',
  'recovery-timeout': 'recovery took too long',
  'unknown-channel': 'request not routed by this plugin',
  'unknown-retries-spent': 'unknown-error retries spent',
};

/** @param {Channel | undefined} c */
const name = (c) => (c ? channelText(c) : '?');

/**
 * "failover 2/4 · turn 3 step 1" from a record's progress fields; '' when none.
 * @param {Pick<NoticedRecord, 'failovers' | 'maxFailovers' | 'turn' | 'step'>} r
 */
export function progress(r) {
  const parts = [];
  if (r.failovers !== undefined && r.failovers > 0) parts.push(`failover ${r.failovers}/${r.maxFailovers ?? '?'}`);
  if (r.turn !== undefined) parts.push(r.step !== undefined ? `turn ${r.turn} step ${r.step}` : `turn ${r.turn}`);
  return parts.join(' · ');
}

/**
 * The notice line for a failover, spill or give-up audit record, or undefined.
 * @param {NoticedRecord} r
 */
export function noticeLine(r) {
  const where = progress(r);
  if (r.type === 'failover') {
    return `dsh-resilience: switched ${name(r.from)} → ${name(r.to)} (${[r.code, where].filter(Boolean).join('; ')})`;
  }
  if (r.type === 'spill') {
    // One request moved, not the session: its next request goes home again.
    return `dsh-resilience: switched ${name(r.from)} → ${name(r.to)} for this request (${r.code} ×${r.failures}; spill)`;
  }
  if (r.type === 'give-up') {
    return `dsh-resilience: gave up on ${name(r.channel)}: ${GIVE_UP_WHY[/** @type {string} */ (r.reason)] ?? r.reason} (${[r.code, where].filter(Boolean).join('; ')})`;
  }
  return undefined;
}

/**
 * @param {{enabled: boolean, headless: () => boolean, write: (line: string) => void}} o
 * @returns {(record: object) => void} never throws: a notice is never worth a decision.
 */
export function makeNotice({ enabled, headless, write }) {
  return (record) => {
    if (!enabled) return;
    try {
      const line = noticeLine(/** @type {NoticedRecord} */ (record));
      if (line && headless()) write(`${line}\n`);
    } catch {
      // stderr closed, a strange record: the audit line already has it
    }
  };
}
