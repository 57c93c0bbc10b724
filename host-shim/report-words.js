// @ts-check
// The timeline picture's own words, in the languages the web client speaks.
// The picture is drawn here (the same SVG for `make report` and the web
// view), so its legend, labels and tooltips are worded here too; the web
// asks for the viewer's locale. Times and channel names are not translated.

/** @typedef {'en' | 'zh'} PictureLanguage */

/** @type {Record<PictureLanguage, Record<string, string>>} */
const WORDS = {
  en: {
    aria: 'timeline of breaker states per channel',
    open: 'open',
    halfOpen: 'half-open (probing)',
    closed: 'closed',
    failover: 'failover',
    giveUp: 'give-up',
    providerWide: 'provider breaker',
    available: '{pct} available',
    notClosed: '{channel}: not closed {from} → {to} ({span})',
    probing: '{channel}: half-open (probing) {from} → {to}',
    stillOpen: 'still open',
    now: 'now',
    failoverTip: 'failover {at} {from} → {to} ({code})',
    giveUpTip: 'give-up {at} {reason} ({code})',
  },
  zh: {
    aria: '各通道熔断状态时间线',
    open: '熔断',
    halfOpen: '半开（探测中）',
    closed: '正常',
    failover: '故障切换',
    giveUp: '放弃',
    providerWide: '服务商熔断',
    available: '可用 {pct}',
    notClosed: '{channel}：未恢复 {from} → {to}（{span}）',
    probing: '{channel}：半开（探测中）{from} → {to}',
    stillOpen: '仍在熔断',
    now: '现在',
    failoverTip: '故障切换 {at} {from} → {to}（{code}）',
    giveUpTip: '放弃 {at} {reason}（{code}）',
  },
};

/**
 * The language of a locale tag the picture speaks: `zh-CN`, `zh` → zh; anything else → en.
 * @param {unknown} locale
 * @returns {PictureLanguage}
 */
export function pictureLanguage(locale) {
  return /^zh\b/i.test(String(locale ?? '')) ? 'zh' : 'en';
}

const UNITS = { en: { ms: ' ms', s: ' s', min: ' min', h: ' h' }, zh: { ms: ' 毫秒', s: ' 秒', min: ' 分', h: ' 小时' } };

/**
 * A span as the picture says it: `formatDuration` of report.js, in the locale's units.
 * @param {unknown} locale
 * @param {number} ms
 */
export function pictureDuration(locale, ms) {
  const u = UNITS[pictureLanguage(locale)];
  if (!Number.isFinite(ms)) return '-';
  if (ms < 1000) return `${Math.round(ms)}${u.ms}`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)}${u.s}`;
  if (s < 60) return `${Math.round(s)}${u.s}`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}${u.min} ${Math.round(s - m * 60)}${u.s}`;
  return `${Math.floor(m / 60)}${u.h} ${m % 60}${u.min}`;
}

/**
 * A word function for one locale: `word('available', {pct: '99%'})`.
 * @param {unknown} locale
 * @returns {(key: string, vars?: Record<string, unknown>) => string}
 */
export function pictureWords(locale) {
  const table = WORDS[pictureLanguage(locale)];
  return (key, vars = {}) => String(table[key] ?? WORDS.en[key] ?? key)
    .replace(/\{(\w+)\}/g, (_, k) => (vars[k] === undefined ? `{${k}}` : String(vars[k])));
}

export const PICTURE_WORD_KEYS = Object.keys(WORDS.en);
export const PICTURE_LANGUAGES = Object.keys(WORDS);
