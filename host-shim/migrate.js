// `dsh-resilience migrate`: the rows of the five plugins this one replaces,
// merged into one `resilience` row. Pure: rows in, {row, table, errors} out;
// reading files, YAML and printing live in migrate-text.js.
//
// Every key of an old row ends up in the table: mapped (old key -> our key and
// value), or without an equivalent (and what the user gets instead). Two keys
// that set one of our keys to different values are refused, both named: a
// migration that picked one silently would change behaviour nobody chose.

import { PLUGINS } from './migrate-plugins.js';

/** The rows this migration reads: one of the five plugins, or our own row. */
export function pluginOf(row) {
  if (!row || typeof row !== 'object') return undefined;
  return PLUGINS.find((p) => p.names.includes(row.name) || p.ids.includes(row.id));
}

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * @param {Array<{id?: string, name?: string, config?: object, disabled?: boolean}>} rows
 *   composed Loader rows (or rows read from patch files); rows of other plugins are ignored.
 * @returns {{row: object, table: object[], errors: string[], sources: object[]}}
 *   row: the `resilience` row's config; table: one line per old key
 *   ({plugin, id, key, value, to, toValue, note}); errors: refusals naming the keys.
 */
export function migrate(rows) {
  const table = [];
  const errors = [];
  const sources = [];
  const set = new Map(); // our key path -> {value, from}
  for (const row of rows ?? []) {
    const plugin = pluginOf(row);
    if (!plugin) continue;
    const label = `${plugin.plugin}${row.id && row.id !== plugin.plugin ? ` (row ${row.id})` : ''}`;
    sources.push({ plugin: plugin.plugin, id: row.id, disabled: row.disabled === true });
    if (row.disabled === true) {
      table.push({ plugin: plugin.plugin, id: row.id, key: '(row)', value: 'disabled', to: null, toValue: undefined,
        note: 'the row is disabled: nothing of it is migrated' });
      continue;
    }
    const config = row.config ?? {};
    if (!isObject(config)) {
      errors.push(`${label}: config must be an object`);
      continue;
    }
    plugin.always?.(config).forEach((a) => assign(a, plugin, row, '(row)', undefined));
    for (const [key, value] of Object.entries(config)) {
      const map = plugin.keys[key];
      if (!map) {
        table.push({ plugin: plugin.plugin, id: row.id, key, value, to: null, toValue: undefined,
          note: `not a key ${plugin.plugin} documents: not migrated; check what it did by hand` });
        continue;
      }
      let out;
      try {
        out = map(value, config);
      } catch (e) {
        errors.push(`${plugin.plugin} key "${key}": ${e.message}`);
        continue;
      }
      for (const a of [].concat(out)) assign(a, plugin, row, key, value);
    }
  }

  function assign(a, plugin, row, key, value) {
    table.push({ plugin: plugin.plugin, id: row.id, key, value, to: a.to ?? null, toValue: a.value, note: a.note ?? '' });
    if (!a.to) return;
    const from = `${plugin.plugin} key "${key}"`;
    const prior = set.get(a.to);
    if (prior && !same(prior.value, a.value)) {
      errors.push(`${from} sets ${a.to} to ${JSON.stringify(a.value)}, but ${prior.from} sets it to ${JSON.stringify(prior.value)}: keep one of them`);
      return;
    }
    if (!prior) set.set(a.to, { value: a.value, from });
  }

  const row = {};
  for (const [path, { value }] of set) put(row, path, value);
  fixRanges(row, table);
  return { row, table, errors, sources };
}

/** Writes `quota.longTermDelayMs` style paths into nested objects. */
function put(obj, path, value) {
  const parts = path.split('.');
  let at = obj;
  for (const p of parts.slice(0, -1)) at = at[p] ??= {};
  const last = parts.at(-1);
  // An empty object is a marker ("the quota rules are on"): it never hides keys set beside it.
  // A copy: the table keeps the value as this key set it.
  if (isObject(value) && isObject(at[last])) Object.assign(at[last], structuredClone(value));
  else at[last] = structuredClone(value);
}

/**
 * Our bounds tie some keys together (maxCooldownMs >= cooldownMs,
 * backoffMaxMs >= backoffBaseMs). An old row that set one past our default of
 * the other gets the other raised with it, in the table, rather than a row
 * the module refuses.
 */
function fixRanges(row, table) {
  const raise = (key, to, value, why) => {
    row[to] = value;
    table.push({ plugin: 'dsh-resilience', id: 'resilience', key: `(from ${key})`, value: row[key], to, toValue: value, note: why });
  };
  if (Number.isInteger(row.cooldownMs) && row.cooldownMs > 1_800_000 && row.maxCooldownMs === undefined) {
    raise('cooldownMs', 'maxCooldownMs', row.cooldownMs, 'our cap of the doubling cooldown (30 min by default) may not be below cooldownMs');
  }
  if (Number.isInteger(row.backoffMaxMs) && row.backoffMaxMs < 1000 && row.backoffBaseMs === undefined) {
    raise('backoffMaxMs', 'backoffBaseMs', Math.max(1, row.backoffMaxMs), 'our first wait (1 s by default) may not be above backoffMaxMs');
  }
  const tools = row.tools;
  if (tools && Number.isInteger(tools.backoffMs) && tools.backoffMs > 8000 && tools.maxBackoffMs === undefined) {
    tools.maxBackoffMs = tools.backoffMs;
    table.push({ plugin: 'dsh-resilience', id: 'resilience', key: '(from tools.backoffMs)', value: tools.backoffMs, to: 'tools.maxBackoffMs', toValue: tools.backoffMs,
      note: 'the cap (8 s by default) may not be below tools.backoffMs' });
  }
}
