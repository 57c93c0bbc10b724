// @ts-check
// `dsh-resilience migrate`: the rows of the five plugins this one replaces,
// merged into one `resilience` row. The mapping is the policy module's
// (policy/migrate, the `migrate` export): keys there are plain strings, so a
// row's `__proto__` or `constructor` key is one more key, never a path into
// a JS prototype. Here: rows in, {row, table, errors, sources} out; reading
// files, YAML and printing live in migrate-text.js.
import { ModuleInstance } from './kernel.js';
import { compileModule, configText } from './engine.js';
import { aliasProblem } from './migrate-aliases.js';

/** @import { MigrateRow, Migrated } from './policy-types.js' */

/**
 * One line of the table: an old key and what it became.
 * @typedef {object} MigrationLine
 * @property {string} plugin - the package whose row held the key
 * @property {string} [id] - that row's id
 * @property {string} key - the old key, `(row)` for what the row itself means
 * @property {unknown} [value] - the old value
 * @property {string | null} to - our key path; null: no equivalent (the note says what instead)
 * @property {unknown} [toValue]
 * @property {string} note
 */

/**
 * @typedef {object} Migration
 * @property {Record<string, unknown>} row - the `resilience` row's config
 * @property {MigrationLine[]} table - one line per old key
 * @property {string[]} errors - refusals, each naming its keys
 * @property {{plugin: string, id?: string, disabled: boolean}[]} sources - the rows read
 */

/**
 * @param {unknown[] | undefined} rows - composed Loader rows (or rows read
 *   from patch files); rows of other plugins are ignored.
 * @param {WebAssembly.Module} [compiled] - the module (compiled once per process by default)
 * @returns {Promise<Migration>}
 */
export async function migrate(rows, compiled) {
  // The host's Loader rows come from the same YAML reader: bounded the same
  // way before anything walks them as a tree (migrate-aliases.js).
  const aliases = aliasProblem(rows);
  if (aliases) throw new Error(`the rows read: ${aliases}`);
  const input = JSON.stringify({ rows: (rows ?? []).filter(isObject).map(exportRow) });
  // An instance of its own, dropped after the one call: the policy's is never asked.
  const out = /** @type {Migrated} */ (JSON.parse(new ModuleInstance(compiled ?? await compileModule()).call('migrate', input)));
  return {
    row: JSON.parse(out.rowJson),
    table: out.table.map((l) => ({
      plugin: l.plugin, id: l.id ?? undefined, key: l.key, value: parsed(l.valueJson),
      to: l.to ?? null, toValue: parsed(l.toValueJson), note: l.note,
    })),
    errors: out.errors,
    sources: out.sources.map((s) => ({ plugin: s.plugin, id: s.id ?? undefined, disabled: s.disabled })),
  };
}

/**
 * A row as the export reads it: its config as JSON text (a non-finite
 * number as "NaN" or "Infinity", as the module is given configs), an id and
 * a name only when they are strings (no other can name one of the plugins).
 * @param {Record<string, any>} row
 * @returns {MigrateRow}
 */
function exportRow(row) {
  return {
    ...(typeof row.id === 'string' ? { id: row.id } : {}),
    ...(typeof row.name === 'string' ? { name: row.name } : {}),
    ...(row.config !== undefined ? { configJson: configText(row.config) } : {}),
    disabled: row.disabled === true,
  };
}

/** @param {unknown} v @returns {v is Record<string, any>} */
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** @param {string | null | undefined} text */
const parsed = (text) => (text == null ? undefined : JSON.parse(text));
