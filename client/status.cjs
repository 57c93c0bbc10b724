// @ts-check
// What the chip and the dock make of the host's status answer (web.js
// `status`): the chip's text and tone from the module's session view, the
// dock's lines from the breakers' states. It renders; it decides nothing.
'use strict';

const { translate, translateOr, pickLocale } = require('./i18n.cjs');
const { countdown, age } = require('./countdown.cjs');

/**
 * @import { Channel, CircuitState, GiveUpReason, Recovery, SlowState, Via } from '../host-shim/policy-types.js'
 * @import { AuditRecord } from './rows.cjs'
 * @import { Translate } from './i18n.cjs'
 */

/**
 * A breaker as the status lists it: a channel's (`p/m`) or a provider's (`p/*`).
 * @typedef {object} Breaker
 * @property {string} channel
 * @property {CircuitState} state
 * @property {number} failures
 * @property {number} [opens]
 * @property {number} openUntilMs
 * @property {string} [lastCode]
 */

/**
 * A channel's slow-call breaker (policy/slow.go), with its time to first token.
 * @typedef {object} SlowBreaker
 * @property {string} channel
 * @property {SlowState} state
 * @property {number} firstTokenMs
 * @property {number | null} [untilMs]
 */

/**
 * The session's last give-up, until its next request (the module's view, policy/view.go).
 * @typedef {object} GiveUp
 * @property {'give-up'} type
 * @property {string} channel
 * @property {GiveUpReason} reason
 * @property {string} code
 * @property {Array<{channel: string, code: string}>} [tried]
 */

/**
 * The module's word on one session (its `view`), channels as "provider/model".
 * @typedef {object} SessionStatus
 * @property {string} id
 * @property {string | null} route - where it runs
 * @property {string | null} home - where it belongs, when away from it
 * @property {{channel: string, via: Via} | null} next - where a failure would send it now
 * @property {boolean} avoided - its channel, or the home it is away from, takes no request now
 * @property {GiveUp | null} giveUp
 */

/**
 * The session's quota switch and pool (host-shim/quota-web.js webView).
 * @typedef {object} QuotaView
 * @property {boolean} enabled
 * @property {boolean} defaultEnabled
 * @property {'session' | 'inherited' | 'default'} source - `inherited`: its parent session's, taken as a snapshot
 * @property {string | null} pool
 * @property {string} poolSource - `session`, `inherited`, `default`, `off`, or how the module chose it
 * @property {string[]} pools
 */

/**
 * The host's status answer (host-shim/web.js `status`), channels as "provider/model".
 * @typedef {object} Status
 * @property {number} revision
 * @property {number} nowMs - the host's clock when it answered
 * @property {string[]} chain
 * @property {string | null} backup
 * @property {Recovery} recovery
 * @property {number} failureThreshold
 * @property {Breaker[]} channels
 * @property {SlowBreaker[]} slow
 * @property {AuditRecord | undefined} lastDecision
 * @property {boolean} moduleOk
 * @property {Record<string, number>} windows - the context window the host declares for a channel
 * @property {SessionStatus} [session] - when a session was named
 * @property {QuotaView} [quota] - when a session was named and the row configures quota rules
 */

/**
 * One line of the dock: a channel's, or (with `provider`) a provider's.
 * @typedef {object} DockLine
 * @property {string} channel
 * @property {'healthy' | 'open' | 'half-open' | 'slow'} state
 * @property {string} text
 * @property {number} failures
 * @property {string | undefined} lastCode
 * @property {string | undefined} window
 * @property {string} [provider]
 */

/** @param {string} channel */
const providerOf = (channel) => String(channel).split('/')[0];

/**
 * The breaker record of a channel (`p/m`) or a provider (`p/*`); closed when unseen.
 * @param {Status | undefined} status
 * @param {string} channel
 * @returns {Breaker}
 */
function breaker(status, channel) {
  const h = ((status && status.channels) || []).find((c) => c.channel === channel);
  return h || { channel, state: 'closed', failures: 0, openUntilMs: 0 };
}

/**
 * Where the next failover would go, as the module says (web.js status, the
 * module's `view`): never derived here, where pools, context fit, slow
 * channels and a restarted session's route are not known.
 * @param {Status | undefined} status
 * @returns {{channel: string, via: Via} | undefined}
 */
function nextTarget(status) {
  return (status && status.session && status.session.next) || undefined;
}

/**
 * Why the chip is a disabled label instead of a menu, or undefined: the
 * plugin is off (`enabled: false`, the host's channel answers `OFF`), no
 * host connection, no session, or no status answer yet but an error.
 * @param {{connection: boolean, session: string | undefined, live: {status?: unknown, error?: string}}} s
 * @param {string | undefined} locale
 */
function chipReason(s, locale) {
  /** @param {string} k */
  const t = (k) => translate(locale, k);
  if (!s.connection) return t('chip.noConnection');
  if (s.live.error === 'OFF') return t('chip.off');
  if (!s.session) return t('chip.noSession');
  if (s.live.status === undefined && s.live.error) return t('chip.noStatus');
  return undefined;
}

/**
 * The chip: `{tone, text}`. Red after a give-up in this session, amber while
 * the session's channel is open or avoided, neutral otherwise.
 * @param {Status | undefined} status
 * @param {number} nowMs
 * @param {string | undefined} locale
 */
function chipView(status, nowMs, locale) {
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  const session = /** @type {Partial<SessionStatus>} */ ((status && status.session) || {});
  const target = nextTarget(status);
  const giveUp = session.giveUp;
  // Amber while the session's own channel is avoided: the one it runs on, or
  // the one it failed over from and has not returned to (the module's word).
  let tone = session.avoided ? 'warn' : 'ok';
  if (giveUp) tone = 'error';
  let text = target ? t(target.via === 'backup' ? 'chip.backup' : 'chip.next', { channel: target.channel }) : t('chip.none');
  if (giveUp) text = t('chip.gaveUp', { reason: t(`reason.${giveUp.reason}`) });
  return { tone, text, target, current: session.route || undefined, home: session.home || undefined };
}

/**
 * The dock's lines: channels and providers, each with its state text.
 * @param {Status | undefined} status
 * @param {number} nowMs
 * @param {string | undefined} locale
 */
function dockView(status, nowMs, locale) {
  /** @type {Translate} */
  const t = (k, v) => translate(locale, k, v);
  const names = new Set([...((status && status.chain) || []), ...((status && status.backup) ? [status.backup] : [])]);
  for (const c of (status && status.channels) || []) names.add(c.channel);
  /**
   * @param {string} channel
   * @returns {DockLine}
   */
  const line = (channel) => {
    const b = breaker(status, channel);
    /** @type {DockLine['state']} */
    let state = 'healthy';
    let text = t('dock.healthy');
    if (b.state === 'open') {
      state = 'open';
      text = b.openUntilMs > nowMs ? t('dock.open', { countdown: countdown(b.openUntilMs - nowMs) }) : t('dock.openDue');
    } else if (b.state === 'half-open') {
      state = 'half-open';
      text = t('dock.halfOpen');
    } else {
      // Closed, but the slow-call breaker (policy/slow.go) may hold it slow: it answers, late.
      const s = ((status && status.slow) || []).find((x) => x.channel === channel);
      if (s && s.state === 'slow') {
        state = 'slow';
        text = t('dock.slow', { seconds: (Math.round((s.firstTokenMs || 0) / 100) / 10).toFixed(1) });
      } else if (s && s.state === 'half-open') {
        state = 'slow';
        text = t('dock.slowProbe');
      }
    }
    return { channel, state, text, failures: b.failures || 0, lastCode: b.lastCode, window: windowLabel(status && status.windows && status.windows[channel]) };
  };
  const all = [...names];
  const channels = all.filter((n) => !n.endsWith('/*')).map(line);
  const providers = all.filter((n) => n.endsWith('/*')).map(line).map((l) => ({ ...l, provider: providerOf(l.channel) }));
  const d = status && status.lastDecision;
  /** @param {string | Channel | undefined} c */
  const chan = (c) => (c && typeof c === 'object' ? `${c.provider}/${c.model}` : c);
  const word = d ? translateOr(locale, `decision.${d.type}`, d.type) : '';
  const code = d && d.code ? (pickLocale(locale) === 'zh' ? `（${d.code}）` : ` (${d.code})`) : '';
  const last = d ? `${word}${d.to ? ` → ${chan(d.to)}` : d.channel ? ` ${chan(d.channel)}` : ''}${code} · ${t('dock.ago', { time: age(nowMs - Date.parse(d.at), locale) })}` : t('dock.never');
  return { channels, providers, backup: (status && status.backup) || t('dock.none'), last };
}

/**
 * A context window as people write it: 128000 is "128k", 1000000 "1M"
 * (decimal, as providers state windows); undefined when the host declares none.
 * @param {number | undefined} tokens
 */
function windowLabel(tokens) {
  if (tokens === undefined || !Number.isFinite(tokens) || tokens <= 0) return undefined;
  /** @param {number} n @param {string} unit */
  const fmt = (n, unit) => `${Number.isInteger(n) ? n : n.toFixed(1).replace(/\.0$/, '')}${unit}`;
  if (tokens >= 1e6) return fmt(Math.round(tokens / 1e5) / 10, 'M');
  if (tokens >= 1e3) return fmt(Math.round(tokens / 100) / 10, 'k');
  return String(tokens);
}

module.exports = { chipReason, breaker, nextTarget, chipView, dockView, windowLabel };
