// @ts-check
// The one parser of `/resilience …` and of the quota plugin's command names
// kept as aliases (`/quota-retry`, `/quota-pool`, `/quota-routes`), so its
// users' habits work. One table of subcommands: the registered hints, the
// usage line and the parse all come from it. The session projection folds
// logged commands (`command/run`) with the same parse, so a typed command,
// an alias and a menu choice read alike.
import { parseChannel } from './channel.js';

/**
 * The subcommands of `/resilience`, with the words each takes. No word: the table.
 * @type {ReadonlyArray<{word: string, hints: string[]}>}
 */
export const SUBCOMMANDS = [
  { word: 'backup', hints: ['backup <provider/model>', 'backup off'] },
  { word: 'quota', hints: ['quota on|off|default|status'] },
  { word: 'pool', hints: ['pool <pool>|off|default|status'] },
  { word: 'routes', hints: ['routes [pool]'] },
  { word: 'report', hints: ['report [24h|7d]'] },
  { word: 'migrate', hints: ['migrate'] },
];

export const HINT = `[${SUBCOMMANDS.flatMap((s) => s.hints).join(' | ')}]`;
export const USAGE = `usage: /resilience ${HINT}`;

/**
 * The commands this plugin registers, in that order: the aliases, each
 * naming the subcommand it is, and `/resilience`.
 */
export const COMMANDS = [
  { name: 'quota-retry', of: 'quota', description: 'dsh-resilience: this session\'s quota retry (long-term waits)', hint: 'on|off|default|status' },
  { name: 'quota-pool', of: 'pool', description: 'dsh-resilience: this session\'s route pool', hint: '<pool>|off|default|status' },
  { name: 'quota-routes', of: 'routes', description: 'dsh-resilience: pools, routes, balance readings and exhaustion marks', hint: '[pool]' },
  { name: 'resilience', description: 'dsh-resilience: channel health, the backup to fail over to first, quota retry, pools and routes', hint: HINT },
];

/**
 * @typedef {{kind: 'show'} | {kind: 'migrate'} | {kind: 'backup', channel?: {provider: string, model: string}}
 *   | {kind: 'quota' | 'pool' | 'routes' | 'report', arg?: string} | {kind: 'error', text: string}} Command
 */

/**
 * A command line as one of the subcommands; undefined for a command that is not this plugin's.
 * @param {string | undefined} name - the command's name, without its slash.
 * @param {unknown} input - what followed it (the host's rawInput, or a logged command's args).
 * @returns {Command | undefined}
 */
export function parseCommandLine(name, input) {
  const alias = COMMANDS.find((c) => c.name === name && c.of);
  if (alias) return /** @type {Command} */ ({ kind: alias.of, arg: wordsOf(input)[0] });
  if (name !== 'resilience') return undefined;
  const words = wordsOf(String(input ?? '').trim().replace(/^\/resilience\b/, ''));
  const [word, arg] = words;
  switch (word) {
    case undefined:
      return { kind: 'show' };
    case 'quota':
    case 'pool':
    case 'routes':
    case 'report':
      return { kind: word, arg };
    case 'migrate':
      return words.length === 1 ? { kind: 'migrate' } : { kind: 'error', text: USAGE };
    case 'backup': {
      if (words.length !== 2) return { kind: 'error', text: USAGE };
      if (arg === 'off') return { kind: 'backup' };
      const channel = parseChannel(arg);
      return channel ? { kind: 'backup', channel } : { kind: 'error', text: `"${arg}" is not provider/model` };
    }
    default:
      return { kind: 'error', text: USAGE };
  }
}

/** @param {unknown} input */
const wordsOf = (input) => String(input ?? '').trim().split(/\s+/).filter(Boolean);
