// The migration's input and output as text: rows from cordis.patch.yml files
// (composed the way the host composes them), and the printed result (a YAML
// patch ready to paste, then the table). The mapping is migrate.js's.

import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { tableLines } from './text.js';
import { aliasProblem } from './migrate-aliases.js';
import { realpathSync } from 'node:fs';
import { join, delimiter } from 'node:path';

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
/**
 * A `!!js` expression scalar, kept unevaluated (parsePatch).
 * @param {unknown} v
 * @returns {v is {__jsExpr: string}}
 */
const isExpr = (v) => isObject(v) && typeof v.__jsExpr === 'string';

/**
 * A row as a patch or the Loader gives it; its fields are checked where used.
 * @typedef {{id?: unknown, name?: unknown, config?: unknown, disabled?: unknown, [field: string]: unknown}} Row
 */

/**
 * The host's YAML reader. The host parses cordis.patch.yml with js-yaml (a
 * dependency of @deepseek-ai/dsh-app-boot): we use the same one, found from
 * where this package is installed, from the host package, or from the `dsh`
 * on PATH, rather than shipping a second YAML parser.
 * @returns {Promise<any>} js-yaml's module: it ships no types, and the host installs none for it.
 */
export async function loadJsYaml(env = process.env) {
  // @ts-expect-error js-yaml ships no types; the host installs none for it
  const tries = [() => import('js-yaml')];
  /** @param {string} path - where the YAML reader is resolved from */
  const from = (path) => () => import(createRequire(path).resolve('js-yaml'));
  try {
    tries.push(from(fileURLToPath(import.meta.resolve('@deepseek-ai/dsh-app-boot'))));
  } catch { /* not resolvable from here */ }
  if (env.DSH_HOST_DIR) tries.push(from(join(env.DSH_HOST_DIR, 'host', 'package.json')));
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    tries.push(() => {
      const dsh = realpathSync(join(dir, 'dsh'));
      return import(createRequire(dsh).resolve('js-yaml'));
    });
  }
  for (const t of tries) {
    try {
      const m = await t();
      return m.default ?? m;
    } catch { /* next */ }
  }
  throw new Error('no YAML reader found: run this with the host\'s node, from a DeepSeek Harness install (js-yaml comes with it)');
}

/**
 * The host's dialect: JSON schema plus `!!js` expression scalars, kept unevaluated.
 * @param {string} text
 * @returns {Promise<unknown[]>} the patches
 */
export async function parsePatch(text, file = 'cordis.patch.yml') {
  const yaml = await loadJsYaml();
  const Js = new yaml.Type('tag:yaml.org,2002:js', { kind: 'scalar', resolve: (/** @type {unknown} */ d) => typeof d === 'string', construct: (/** @type {string} */ d) => ({ __jsExpr: d }) });
  const doc = yaml.load(text, { schema: yaml.JSON_SCHEMA.extend(Js), filename: file });
  const aliases = aliasProblem(doc);
  if (aliases) throw new Error(`${file}: ${aliases}`);
  if (doc == null) return [];
  if (!Array.isArray(doc)) throw new Error(`${file}: a cordis.patch.yml is a list of patches`);
  return doc;
}

/**
 * Rows from patch lists, in the order the host applies them: `insert` adds
 * rows, `- id: X` replaces the named fields of row X (its whole `config`). A
 * patch naming a row no earlier layer inserted still counts: its plugin's own
 * bundle layer usually inserts it, and its config is what the user wrote.
 * @param {unknown[][]} lists - each file's patches
 * @returns {Row[]}
 */
export function rowsFromPatches(lists) {
  /** @type {Map<unknown, Row>} id (or a symbol for a row with none) -> the row */
  const rows = new Map();
  /** @param {unknown[]} list */
  const walk = (list) => {
    for (const patch of list) {
      if (!isObject(patch)) continue;
      const { id, insert, ...fields } = patch;
      if (Array.isArray(insert)) {
        for (const row of insert) if (isObject(row)) rows.set(row.id ?? Symbol('row'), { ...row });
        continue;
      }
      if (typeof id === 'string') rows.set(id, { ...(rows.get(id) ?? { id }), ...fields });
    }
  };
  for (const list of lists) walk(list);
  return [...rows.values()];
}

/** @param {string[]} files */
export async function readPatchFiles(files) {
  const lists = [];
  for (const file of files) lists.push(await parsePatch(await readFile(file, 'utf8'), file));
  return rowsFromPatches(lists);
}

/**
 * The Loader's composed rows, when the host exposes them to the plugin.
 * @param {unknown} ctx - the plugin's context: the Loader service is not one the host declares to plugins.
 * @returns {Row[] | undefined}
 */
export function loaderRows(ctx) {
  /** @typedef {{get?: (name: string) => unknown, loader?: unknown}} LoaderHost */
  /** @typedef {{entries?: () => Iterable<Row & {options?: Row}>}} Loader */
  const host = /** @type {LoaderHost | undefined} */ (ctx);
  /** @type {Iterable<Row & {options?: Row}> | undefined} */
  let entries;
  try {
    entries = /** @type {Loader | undefined} */ (host?.get?.('loader') ?? host?.loader)?.entries?.();
  } catch { /* not reachable from this context */ }
  if (!entries) return undefined;
  return [...entries].map((e) => e.options ?? e).map(({ id, name, config, disabled }) => ({ id, name, config, disabled }));
}

const PLAIN = /^[A-Za-z_][\w./@+-]*$/;
const RESERVED = /^(true|false|null|yes|no|on|off|y|n|~)$/i;
// What JSON leaves raw but YAML must not see raw: js-yaml refuses a stream
// with C1 controls, U+FFFE or U+FFFF in it, and U+0085, U+2028 and U+2029
// are line breaks to other YAML readers.
const YAML_UNSAFE = /[\u007f-\u009f\u2028\u2029\ufeff\ufffe\uffff]/g;
/**
 * A string as a YAML double-quoted scalar. JSON's escapes are YAML's too,
 * and JSON escapes every other control character, quotes, backslashes and
 * lone surrogates: the host's reader gives back exactly s.
 * @param {string} s
 */
export const quoted = (s) => JSON.stringify(s).replace(YAML_UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/**
 * Text for one YAML comment line: a line break in it (a key's name is the
 * user's text) would end the comment and start YAML.
 * @param {string} s
 */
const comment = (s) => s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** @param {unknown} v */
function scalar(v) {
  // Always quoted after the tag: a plain scalar would end at ` #`, read
  // `a ? b : c` as a mapping, and a line break would start new YAML (a row).
  if (isExpr(v)) return `!!js ${quoted(v.__jsExpr)}`;
  if (typeof v === 'string') return PLAIN.test(v) && !RESERVED.test(v) ? v : quoted(v);
  if (v === undefined) return '~';
  return JSON.stringify(v);
}
/** @param {unknown} v */
const flat = (v) => isObject(v) && !isExpr(v) && Object.values(v).every((x) => !isObject(x) && !Array.isArray(x) || isExpr(x));

/**
 * YAML for a config value: block style, small flat objects inline (`{ provider: p, model: m }`).
 * @param {unknown} value
 * @returns {string}
 */
export function toYaml(value, indent = '') {
  if (Array.isArray(value)) {
    if (value.length === 0) return ' []';
    return value.map((v) => {
      if (isObject(v) && !isExpr(v) && !flat(v)) {
        const body = toYaml(v, `${indent}  `).replace(/^\n\s*/, '');
        return `\n${indent}- ${body}`;
      }
      return `\n${indent}- ${inline(v)}`;
    }).join('');
  }
  if (isObject(value) && !isExpr(value)) {
    const keys = Object.keys(value);
    if (keys.length === 0) return ' {}';
    return keys.map((k) => `\n${indent}${scalar(k)}:${isObject(value[k]) && !isExpr(value[k]) || Array.isArray(value[k]) ? toYaml(value[k], `${indent}  `) : ` ${scalar(value[k])}`}`).join('');
  }
  return ` ${scalar(value)}`;
}
/**
 * @param {unknown} v
 * @returns {string}
 */
function inline(v) {
  if (isObject(v) && !isExpr(v)) return `{ ${Object.entries(v).map(([k, x]) => `${scalar(k)}: ${scalar(x)}`).join(', ')} }`;
  if (Array.isArray(v)) return `[${v.map(inline).join(', ')}]`;
  return scalar(v);
}

/** @param {unknown} v */
const show = (v) => (v === undefined ? '' : isExpr(v) ? `!!js ${quoted(v.__jsExpr)}` : JSON.stringify(v));

/**
 * The table: old key -> our key and value, or no equivalent and what instead.
 * @param {import('./migrate.js').MigrationLine[]} table
 */
export function renderTable(table) {
  const rows = [['plugin', 'old key', 'old value', 'new key', 'new value', 'note']];
  for (const t of table) rows.push([t.plugin, t.key, show(t.value), t.to ?? '(none)', t.to ? show(t.toValue) : '', t.note]);
  /** @param {string} s */
  const cap = (s) => (s.length > 60 ? `${s.slice(0, 57)}...` : s);
  const cells = rows.map((r) => r.map((c, i) => (i === 2 || i === 4 ? cap(c) : c)));
  return tableLines(cells, { padded: 5 }).join('\n'); // the note runs free
}

/**
 * The whole printout: the patch to paste (our row, and the old rows turned
 * off so two plugins do not handle one failure), then the table.
 * @param {import('./migrate.js').Migration} migration
 */
export function renderMigration({ row, table, errors, sources }) {
  if (sources.filter((s) => s.plugin !== 'dsh-resilience').length === 0) {
    return ['No row of dsh-daruma, dsh-reconnect, dsh-llm-quota-retry, dsh-plugin-tool-retry or dsh-model-failover found: nothing to migrate.',
      'A row whose plugin is no longer installed is not loaded by the host: name the file that holds it',
      '(dsh-resilience migrate path/to/cordis.patch.yml).'].join('\n');
  }
  const table_ = renderTable(table);
  if (errors.length > 0) {
    return ['dsh-resilience migrate: these keys contradict each other; keep one of each and run it again:',
      ...errors.map((e) => `  - ${e}`), '', table_].join('\n');
  }
  const old = [...new Set(sources.filter((s) => s.plugin !== 'dsh-resilience' && s.id && !s.disabled).map((s) => s.id))];
  // The module's warnings (a secret written into the row) head the patch
  // too: the patch is the part that is copied, and the table may not be read.
  const warnings = table.filter((t) => t.to === null && t.note.startsWith('warning:')).map((t) => `# ${comment(t.note)}`);
  const patch = [
    '# dsh-resilience migrate: paste into your profile\'s or home\'s cordis.patch.yml,',
    '# in place of the old rows\' patches (a `config:` replaces the whole row config).',
    ...warnings,
    `- id: resilience\n  config:${toYaml(row, '    ')}`,
    ...old.map((id) => `- id: ${scalar(id)}\n  disabled: true`),
  ];
  return [...patch, '', table_].join('\n');
}
