// @ts-check
// What the chip and the dock make of the host's status answer (web.js
// `status`; its shape is StatusAnswer, host-shim/web-rpc.d.ts): the chip's
// text and tone from the module's session view, the dock's lines from the
// breakers' states. It renders; it decides nothing.
'use strict';

const { translate, translateOr, pickLocale } = require('./i18n.cjs');
const { countdown, age } = require('./countdown.cjs');

/**
 * @import { Channel, Via } from '../host-shim/policy-types.js'
 * @import { Breaker, SessionStatus, StatusAnswer } from '../host-shim/web-rpc.js'
 * @import { Translate } from './i18n.cjs'
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
 * @param {StatusAnswer | undefined} status
 * @param {string} channel
 * @returns {Breaker}
 */
function breaker(status, channel) {
  const h = ((status && status.channels) || []).find((c) => c.channel === channel);
  return h || { channel, state: 'closed', failures: 0, opens: 0, openUntilMs: 0 };
}

/**
 * Where the next failover would go, as the module says (web.js status, the
 * module's `view`): never derived here, where pools, context fit, slow
 * channels and a restarted session's route are not known.
 * @param {StatusAnswer | undefined} status
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
 * @param {StatusAnswer | undefined} status
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
 * @param {StatusAnswer | undefined} status
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
