// @ts-check
// `/resilience`: every channel's breaker as a table, and the user's backup.
//   /resilience                      the table
//   /resilience backup <prov/model>  try this channel first when failing over
//   /resilience backup off           back to the configured chain alone
//   /resilience migrate              the loaded rows of the plugins this one replaces, as one row

import { isoTime } from './effects.js';

const when = (ms) => (ms ? (isoTime(ms) ?? String(ms)).replace('T', ' ').slice(0, 19) : '-');

export function renderTable(resolved, health, backup, nowMs) {
  const rows = [['channel', 'state', 'failures', 'opens', 'open until / next probe', 'last code']];
  for (const h of health?.channels ?? []) {
    const due = h.state !== 'closed' && h.openUntilMs <= nowMs ? 'due now' : when(h.state === 'closed' ? 0 : h.openUntilMs);
    rows.push([`${h.channel.provider}/${h.channel.model}`, h.state, String(h.failures), String(h.opens ?? 0), due, h.lastCode || '-']);
  }
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const lines = rows.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd());
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const chain = resolved.chain.map((c) => `${c.provider}/${c.model}`).join(' → ') || '(none: observing only)';
  const head = [`chain: ${chain}`, `backup: ${backup ? `${backup.provider}/${backup.model}` : '(none)'}`,
    `recovery: ${resolved.recovery}, probes: ${resolved.probes ? 'on' : 'off'}`];
  if ((health?.channels ?? []).length === 0) return [...head, '', 'All channels healthy: no failures recorded.'].join('\n');
  return [...head, '', ...lines].join('\n');
}

/**
 * Parses the command's input.
 * @returns {{kind:'show'} | {kind:'migrate'} | {kind:'backup', channel?: {provider, model}} | {kind:'error', text}}
 */
export function parseCommand(raw) {
  const words = String(raw ?? '').trim().replace(/^\/resilience\b/, '').trim().split(/\s+/).filter(Boolean);
  if (words.length === 0) return { kind: 'show' };
  if (words[0] === 'migrate' && words.length === 1) return { kind: 'migrate' };
  if (words[0] !== 'backup' || words.length !== 2) return { kind: 'error', text: 'usage: /resilience [backup <provider/model> | backup off | quota on|off|default|status | pool <pool>|off|default|status | routes [pool] | report [24h|7d] | migrate]' };
  if (words[1] === 'off') return { kind: 'backup' };
  const slash = words[1].indexOf('/');
  if (slash <= 0 || slash === words[1].length - 1) return { kind: 'error', text: `"${words[1]}" is not provider/model` };
  return { kind: 'backup', channel: { provider: words[1].slice(0, slash), model: words[1].slice(slash + 1) } };
}

/**
 * `/resilience migrate`: the rows the host loaded (its Loader's entries), or,
 * where the host does not expose them, the home's cordis.patch.yml.
 */
export async function migrateText(ctx, homePatch) {
  // Loaded when asked: the migration tables are not on the host's start-up path.
  const [{ migrate }, { loaderRows, readPatchFiles, renderMigration }, { checkRow }] = await Promise.all([
    import('./migrate.js'), import('./migrate-text.js'), import('./migrate-check.js')]);
  let rows = loaderRows(ctx);
  let where = 'the rows this host loaded';
  if (!rows) {
    rows = await readPatchFiles([homePatch]).catch(() => []);
    where = homePatch;
  }
  const result = migrate(rows);
  const check = result.errors.length === 0 ? await checkRow(result.row) : {};
  const verdict = check.ok === false ? `\n\nThe module refuses this row: ${check.error}` : '';
  return { ok: result.errors.length === 0 && check.ok !== false, text: `From ${where}:\n\n${renderMigration(result)}${verdict}` };
}
