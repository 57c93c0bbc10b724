#!/usr/bin/env node
// @ts-check
// dsh-resilience migrate [cordis.patch.yml ...] [--profile <name>]
//
// Reads the rows of dsh-daruma, dsh-reconnect, dsh-llm-quota-retry,
// dsh-plugin-tool-retry and dsh-model-failover, and prints one `resilience`
// row to paste, and a table of every old key. Without files it reads what the
// host composes for the profile (web unless --profile): each installed
// plugin's bundle layer, the profile's cordis.patch.yml, then $DSH_HOME's.
// Exit 0: printed; 1: contradictory or refused keys; 2: usage or unreadable input.

import { readFile, access } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, dirname } from 'node:path';
import { migrate } from '../host-shim/migrate.js';
import { readPatchFiles, renderMigration } from '../host-shim/migrate-text.js';
import { checkRow } from '../host-shim/migrate-check.js';

const USAGE = 'usage: dsh-resilience migrate [cordis.patch.yml ...] [--profile <name>]';

/** @param {string} p */
const exists = (p) => access(p).then(() => true, () => false);

/**
 * The files the host composes for a profile, in its order: each bundle's own
 * layer (`dsh.profile.bundles`, where a plugin's row and its defaults are),
 * the profile's cordis.patch.yml, then the home's.
 * @param {string} profile
 * @returns {Promise<string[]>}
 */
async function profileFiles(profile) {
  const home = process.env.DSH_HOME || join(homedir(), '.dsh');
  const dir = join(home, 'profiles', profile);
  /** @type {string[]} */
  const files = [];
  /** @type {{dsh?: {profile?: {bundles?: string[]}}}} the profile's package.json, as far as it is read */
  const manifest = await readFile(join(dir, 'package.json'), 'utf8').then(JSON.parse, () => ({}));
  for (const bundle of manifest.dsh?.profile?.bundles ?? []) {
    for (const modules of [join(dir, 'node_modules'), join(home, 'profiles', 'node_modules')]) {
      const pkgFile = join(modules, bundle, 'package.json');
      const patch = await readFile(pkgFile, 'utf8').then((t) => JSON.parse(t).dsh?.bundle?.patch, () => undefined);
      if (typeof patch === 'string') {
        files.push(join(dirname(pkgFile), patch));
        break;
      }
    }
  }
  files.push(join(dir, 'cordis.patch.yml'), join(home, 'cordis.patch.yml'));
  /** @type {string[]} */
  const out = [];
  for (const f of files) if (await exists(f)) out.push(f);
  return out;
}

/**
 * @param {string[]} argv - the arguments after the script's name
 * @returns {Promise<number>} the exit code
 */
async function main(argv) {
  const [cmd, ...rest] = argv;
  if (cmd !== 'migrate') return fail(USAGE, 2);
  let profile = 'web';
  /** @type {string[]} */
  const files = [];
  for (let i = 0; i < rest.length; i++) {
    if (rest[i] === '--profile' && rest[i + 1]) profile = rest[++i];
    else if (rest[i].startsWith('-')) return fail(USAGE, 2);
    else files.push(rest[i]);
  }
  const inputs = files.length > 0 ? files : await profileFiles(profile);
  if (inputs.length === 0) return fail(`dsh-resilience migrate: no cordis.patch.yml found for profile "${profile}"; name the file\n${USAGE}`, 2);
  let result;
  try {
    result = await migrate(await readPatchFiles(inputs));
  } catch (e) {
    // The reason, never a stack: unreadable YAML, a refused alias bomb, an
    // input the module will not take are the input's fault, named in e.
    return fail(`dsh-resilience migrate: ${e instanceof Error ? e.message : e}`, 2);
  }
  process.stdout.write(`${renderMigration(result)}\n`);
  if (result.errors.length > 0) return 1;
  /** @type {{ok?: boolean, error?: string, skipped?: string}} */
  const check = await checkRow(result.row);
  if (check.ok === false) {
    process.stderr.write(`dsh-resilience migrate: the module refuses this row: ${check.error}\n`);
    return 1;
  }
  if (check.skipped) process.stderr.write(`dsh-resilience migrate: row not checked: ${check.skipped}\n`);
  return 0;
}

/**
 * Says why on stderr and answers the exit code.
 * @param {string} text
 * @param {number} code
 */
function fail(text, code) {
  process.stderr.write(`${text}\n`);
  return code;
}

process.exitCode = await main(process.argv.slice(2));
