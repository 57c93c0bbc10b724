// @ts-check
// The module's refusal of a setting, in the viewer's language. The module
// words its checks once, in English, naming the key (`config key "X": must
// be …`); the settings card shows that message beside the field. In Chinese
// the key becomes the field's own label and the reason is reworded from a
// table of the module's reason shapes. A shape the table does not know keeps
// its English reason (better a clear message than none), and the test lists
// every refusal the card's fields can meet so none is left English.
'use strict';

const { pickLocale, translate } = require('./i18n.cjs');

/**
 * [the module's reason, its Chinese] — `$1`… are the reason's own numbers and names.
 * @type {Array<[RegExp, string]>}
 */
const REASONS = [
  [/^must be between (\d+) \(off\) and (\d+)$/, '须在 $1（关闭）到 $2 之间'],
  [/^must be between (\d+) and (\d+)$/, '须在 $1 到 $2 之间'],
  [/^must be between (\d+) and one week$/, '须在 $1 到一周之间'],
  [/^must be between (\d+) and one day$/, '须在 $1 到一天之间'],
  [/^must be at least backoffBaseMs and at most one day$/, '须不小于基础退避时间，且不超过一天'],
  [/^must be at least cooldownMs and at most one week$/, '须不小于冷却时间，且不超过一周'],
  [/^must be an integer between 0 and \d+, not null \(leave the key out for its default\)$/, '须为非负整数，不能为空（删去此项即用默认值）'],
  [/^must be an integer between 0 and \d+(, not .*)?$/, '须为非负整数'],
  [/^must be one of \[(.*)\], not "(.*)"$/, '须为以下之一：$1（而非 “$2”）'],
  [/^must be a non-empty string$/, '须为非空字符串'],
  [/^must be a string$/, '须为字符串'],
  [/^must be a number$/, '须为数字'],
  [/^must be a boolean$/, '须为布尔值（true 或 false）'],
  [/^must be an array$/, '须为列表'],
  [/^must be an object$/, '须为对象'],
  [/^is required$/, '为必填项'],
  [/^unknown key \(known: \[(.*)\]\)$/, '是未知的配置项（可用：$1）'],
  [/^duplicates (.*)$/, '与 $1 重复'],
];

const PROBLEM = /^(?:dsh-resilience: )?config key "([^"]+)": (.*)$/s;

/** @type {Readonly<Record<string, string>>} */
const PARTS = { provider: '服务商', model: '模型' };

/**
 * What a key is called on the card: its field's label, with a chain entry's place.
 * @param {string | undefined} locale
 * @param {string} key
 */
function keyName(locale, key) {
  const chain = /^chain\[(\d+)\](?:\.(\w+))?$/.exec(key);
  if (chain) return `${translate(locale, 'settings.chain')} #${Number(chain[1]) + 1}${chain[2] ? ` ${PARTS[chain[2]] ?? chain[2]}` : ''}`;
  const label = translate(locale, `settings.${key}`);
  return label === `settings.${key}` ? key : label;
}

/**
 * The message to show for the module's `problem`, in `locale`.
 * @param {string|undefined} locale
 * @param {string} problem - the module's message, word for word.
 */
function localizeProblem(locale, problem) {
  const text = String(problem ?? '');
  if (pickLocale(locale) !== 'zh') return text;
  const m = PROBLEM.exec(text);
  if (!m) return text;
  const [, key, reason] = m;
  const row = REASONS.find(([re]) => re.test(reason));
  const zh = row ? reason.replace(row[0], row[1]) : reason;
  return `“${keyName(locale, key)}”${zh}`;
}

module.exports = { localizeProblem };
