// The one parser of `/resilience …` and its aliases (command-line.js): every
// subcommand, every alias, the usage line built from the one table, and the
// commands the plugin registers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { COMMANDS, HINT, parseCommandLine, SUBCOMMANDS, USAGE } from '../command-line.js';

const r = (line) => parseCommandLine('resilience', line);

test('every /resilience subcommand', () => {
  // no word: the table, also when the host passes the command's own name
  for (const line of ['', '   ', undefined, '/resilience', ' /resilience ']) assert.deepEqual(r(line), { kind: 'show' }, String(line));
  // backup
  assert.deepEqual(r(' backup  deepseek-official/deepseek-v4-pro '), { kind: 'backup', channel: { provider: 'deepseek-official', model: 'deepseek-v4-pro' } });
  assert.deepEqual(r('backup org/model/with/slashes'), { kind: 'backup', channel: { provider: 'org', model: 'model/with/slashes' } }, 'split at the first slash');
  assert.deepEqual(r('backup off'), { kind: 'backup' });
  assert.deepEqual(r('/resilience backup p/m'), { kind: 'backup', channel: { provider: 'p', model: 'm' } });
  assert.deepEqual(r('backup /m'), { kind: 'error', text: '"/m" is not provider/model' });
  assert.deepEqual(r('backup p/'), { kind: 'error', text: '"p/" is not provider/model' });
  for (const bad of ['backup', 'backup a/b c']) assert.deepEqual(r(bad), { kind: 'error', text: USAGE }, bad);
  // quota, pool: the word after, or none (status)
  assert.deepEqual(r('quota off'), { kind: 'quota', arg: 'off' });
  assert.deepEqual(r('quota'), { kind: 'quota', arg: undefined });
  assert.deepEqual(r('pool default'), { kind: 'pool', arg: 'default' });
  assert.deepEqual(r('pool  spare  extra'), { kind: 'pool', arg: 'spare' }, 'words after the argument are not read');
  // routes, report: an optional word
  assert.deepEqual(r('routes'), { kind: 'routes', arg: undefined });
  assert.deepEqual(r('routes main'), { kind: 'routes', arg: 'main' });
  assert.deepEqual(r('report'), { kind: 'report', arg: undefined });
  assert.deepEqual(r('report 7d'), { kind: 'report', arg: '7d' });
  // migrate: alone
  assert.deepEqual(r('migrate'), { kind: 'migrate' });
  assert.deepEqual(r('/resilience migrate'), { kind: 'migrate' });
  assert.deepEqual(r('migrate now'), { kind: 'error', text: USAGE });
  // anything else: the usage line
  for (const bad of ['reset', 'Backup p/m', 'status']) assert.deepEqual(r(bad), { kind: 'error', text: USAGE }, bad);
  // every subcommand in the table parses to its own kind
  for (const { word } of SUBCOMMANDS) {
    const line = word === 'backup' ? 'backup off' : word;
    assert.equal(r(line)?.kind, word, word);
  }
});

test('every alias is its /resilience subcommand', () => {
  assert.deepEqual(parseCommandLine('quota-retry', ' off '), { kind: 'quota', arg: 'off' });
  assert.deepEqual(parseCommandLine('quota-retry', ''), { kind: 'quota', arg: undefined });
  assert.deepEqual(parseCommandLine('quota-pool', 'spare'), { kind: 'pool', arg: 'spare' });
  assert.deepEqual(parseCommandLine('quota-routes', 'main'), { kind: 'routes', arg: 'main' });
  assert.deepEqual(parseCommandLine('quota-routes', undefined), { kind: 'routes', arg: undefined });
  for (const c of COMMANDS.filter((x) => x.of)) {
    assert.deepEqual(parseCommandLine(c.name, 'x'), r(`${c.of} x`), `/${c.name} x is /resilience ${c.of} x`);
  }
});

test('a command that is not this plugin\'s is not parsed (the projection folds only ours)', () => {
  assert.equal(parseCommandLine('compact', ''), undefined);
  assert.equal(parseCommandLine(undefined, 'quota on'), undefined);
});

test('the registered commands and the usage line come from the one table', () => {
  assert.deepEqual(COMMANDS.map((c) => c.name), ['quota-retry', 'quota-pool', 'quota-routes', 'resilience']);
  assert.equal(HINT, '[backup <provider/model> | backup off | quota on|off|default|status | pool <pool>|off|default|status | routes [pool] | report [24h|7d] | migrate]');
  assert.equal(USAGE, `usage: /resilience ${HINT}`);
  assert.equal(COMMANDS.find((c) => c.name === 'resilience')?.hint, HINT);
  for (const c of COMMANDS.filter((x) => x.of)) assert.ok(SUBCOMMANDS.some((s) => s.word === c.of), c.name);
});
