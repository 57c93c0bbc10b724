// @ts-check
// `/resilience` and its aliases, registered with the host's commands and
// answered: each line parsed once (command-line.js), each subcommand sent
// to the part that answers it.
//   /resilience                      every channel's breaker as a table
//   /resilience backup <prov/model>  try this channel first when failing over
//   /resilience backup off           back to the configured chain alone
//   /resilience quota|pool …         this session's quota settings (quota-commands.js)
//   /resilience routes [pool]        pools, routes, readings, marks (quota-commands.js)
//   /resilience report [24h|7d]      the audit log's report (report-command.js)
//   /resilience migrate              the loaded rows of the plugins this one replaces, as one row

import { channelText } from './channel.js';
import { tableLines, timeOrDash } from './text.js';
import { COMMANDS, parseCommandLine } from './command-line.js';
import { poolCommand, quotaCommand, routesTable } from './quota-commands.js';

/** @typedef {import('@deepseek-ai/dsh-commands').CommandResult} CommandResult */
/** @import { Channel, Health, ResolvedConfig } from './policy-types.js' */

/**
 * The breakers' table: the chain, the backup, and each channel's health.
 * @param {ResolvedConfig} resolved
 * @param {Health | undefined} health - undefined when the module failed
 * @param {Channel | undefined} backup
 * @param {number} nowMs - the module's clock
 */
export function renderTable(resolved, health, backup, nowMs) {
  const rows = [['channel', 'state', 'failures', 'opens', 'open until / next probe', 'last code']];
  for (const h of health?.channels ?? []) {
    const due = h.state !== 'closed' && h.openUntilMs <= nowMs ? 'due now' : timeOrDash(h.state === 'closed' ? 0 : h.openUntilMs);
    rows.push([channelText(h.channel), h.state, String(h.failures), String(h.opens ?? 0), due, h.lastCode || '-']);
  }
  const lines = tableLines(rows, { rule: true });
  const chain = resolved.chain.map(channelText).join(' → ') || '(none: observing only)';
  const head = [`chain: ${chain}`, `backup: ${backup ? channelText(backup) : '(none)'}`,
    `recovery: ${resolved.recovery}, probes: ${resolved.probes ? 'on' : 'off'}`];
  if ((health?.channels ?? []).length === 0) return [...head, '', 'All channels healthy: no failures recorded.'].join('\n');
  return [...head, '', ...lines].join('\n');
}

/**
 * `/resilience migrate`: the rows the host loaded (its Loader's entries), or,
 * where the host does not expose them, the home's cordis.patch.yml.
 * @param {unknown} ctx - the plugin's context (migrate-text.js loaderRows)
 * @param {string} homePatch - the home's cordis.patch.yml
 * @returns {Promise<{ok: boolean, text: string}>}
 */
export async function migrateText(ctx, homePatch) {
  // Loaded when asked: the migration tables are not on the host's start-up path.
  const [{ migrate }, { loaderRows, readPatchFiles, renderMigration }, { checkRow }] = await Promise.all([
    import('./migrate.js'), import('./migrate-text.js'), import('./migrate-check.js')]);
  let rows = loaderRows(ctx);
  let where = 'the rows this host loaded';
  let result;
  try {
    if (!rows) {
      where = homePatch;
      // No file is nothing to migrate; a file refused (bad YAML, an alias bomb) says why.
      rows = await readPatchFiles([homePatch]).catch((e) => { if (e?.code === 'ENOENT') return []; throw e; });
    }
    result = await migrate(rows);
  } catch (e) {
    return { ok: false, text: `dsh-resilience migrate: ${e instanceof Error ? e.message : e}` };
  }
  /** @type {{ok?: boolean, error?: string, skipped?: string}} */
  const check = result.errors.length === 0 ? await checkRow(result.row) : {};
  const verdict = check.ok === false ? `\n\nThe module refuses this row: ${check.error}` : '';
  return { ok: result.errors.length === 0 && check.ok !== false, text: `From ${where}:\n\n${renderMigration(result)}${verdict}` };
}

/**
 * What answering a command needs.
 * @typedef {object} CommandDeps
 * @property {() => Promise<boolean>} whenUp - whether the engine answers (after its bring-up)
 * @property {import('./quota.js').QuotaRules} quota
 * @property {(word: string | undefined) => Promise<CommandResult>} reportOf - `/resilience report`'s answer for a window
 * @property {(channel: {provider: string, model: string} | undefined) => Promise<string | undefined>} setBackup - why it was refused, if it was
 * @property {() => Promise<{ok: boolean, text: string}>} migrate
 * @property {() => string} table - the breakers' table
 */

/**
 * One parsed command's answer.
 * @param {any} agent - the agent the command runs in
 * @param {import('./command-line.js').Command} cmd
 * @param {Omit<CommandDeps, 'whenUp'>} deps
 * @returns {Promise<CommandResult>}
 */
export async function answer(agent, cmd, deps) {
  switch (cmd.kind) {
    case 'error':
      return { kind: 'error', text: cmd.text };
    case 'quota':
      return deps.quota.answered(quotaCommand(deps.quota, agent, cmd.arg));
    case 'pool':
      return deps.quota.answered(poolCommand(deps.quota, agent, cmd.arg));
    case 'routes':
      return routesTable(deps.quota, cmd.arg);
    case 'report':
      return deps.reportOf(cmd.arg);
    case 'migrate': {
      const m = await deps.migrate();
      return { kind: m.ok ? 'success' : 'error', text: m.text };
    }
    case 'backup': {
      const refused = await deps.setBackup(cmd.channel);
      if (refused) return { kind: 'error', text: refused };
      return { kind: 'success', text: deps.table() };
    }
    default:
      return { kind: 'success', text: deps.table() };
  }
}

/**
 * Registers `/resilience` and the aliases while the host's commands service exists.
 * @param {import('./host.js').Context} ctx
 * @param {CommandDeps} deps
 */
export function installCommands(ctx, deps) {
  ctx.inject(['commands'], (sub) => {
    for (const { name, description, hint } of COMMANDS) {
      sub.effect(() => sub.commands.register({
        name, description, input: { hint },
        handler: async ({ agent, rawInput }) => ((await deps.whenUp().catch(() => false))
          ? answer(agent, /** @type {import('./command-line.js').Command} */ (parseCommandLine(name, rawInput)), deps)
          : { kind: 'error', text: 'dsh-resilience: the policy module is not running; see the audit log' }),
      }), `dsh-resilience: /${name}`);
    }
  });
}
