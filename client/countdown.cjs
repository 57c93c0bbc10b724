// @ts-check
// Countdown and age formatting for the dock: `1:05`, `12:00`, `1:02:03`;
// `45s ago`. The host sends its clock with every status, so a browser whose
// clock is off still counts down to the host's `openUntilMs`.
'use strict';

const { translate } = require('./i18n.cjs');

/** @import { StatusAnswer } from '../host-shim/web-rpc.js' */

/**
 * Remaining time as `m:ss` (or `h:mm:ss`); `0:00` when due.
 * @param {number} ms
 */
function countdown(ms) {
  const total = Math.max(0, Math.ceil((Number(ms) || 0) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  /** @param {number} n */
  const p = (n) => String(n).padStart(2, '0');
  return h > 0 ? `${h}:${p(m)}:${p(s)}` : `${m}:${p(s)}`;
}

/**
 * A short age in the locale's words: `5s`, `3m`, `2h`, `4d` (`5秒` ... in Chinese).
 * @param {number} ms
 * @param {string | undefined} locale
 */
function age(ms, locale) {
  const s = Math.max(0, Math.floor((Number(ms) || 0) / 1000));
  /** @param {'s' | 'm' | 'h' | 'd'} unit @param {number} n */
  const t = (unit, n) => translate(locale, `time.${unit}`, { n });
  if (s < 60) return t('s', s);
  if (s < 3600) return t('m', Math.floor(s / 60));
  if (s < 86400) return t('h', Math.floor(s / 3600));
  return t('d', Math.floor(s / 86400));
}

/**
 * The host's "now" as the browser sees it: its clock plus the time since the status came.
 * @param {StatusAnswer | undefined} status
 * @param {number} receivedAtMs
 * @param {number} browserNowMs
 */
function hostNow(status, receivedAtMs, browserNowMs) {
  if (!status || !Number.isFinite(status.nowMs)) return browserNowMs;
  return status.nowMs + Math.max(0, browserNowMs - receivedAtMs);
}

module.exports = { countdown, age, hostNow };
