// @ts-check
// The user's backup choice (`/resilience backup`) outlives the process: it is
// a preference, not a health fact, so it gets a file of its own, written like
// every state file (store.js: locked, temp + rename, a corrupt file set
// aside). Clearing writes `channel: null`, so the file's version `v` (bumped
// by every write) still tells which choice came last. An unreadable file is
// ignored (and audited): no backup is the safe default.
import { StateFile } from './store.js';
import { setBackupEvent } from './events.js';
import { channelId } from './channel.js';

/**
 * @param {string} path
 * @param {(record: object) => void} [audit]
 */
const file = (path, audit = () => {}) => new StateFile(path, { audit, setAside: { type: 'backup-set-aside' } });
/**
 * @param {{provider?: unknown, model?: unknown} | null | undefined} c
 * @returns {c is {provider: string, model: string}}
 */
const valid = (c) => typeof c?.provider === 'string' && c.provider !== '' && typeof c?.model === 'string' && c.model !== '';

/**
 * @param {string} path
 * @param {(record: object) => void} audit
 * @returns {Promise<{provider: string, model: string} | undefined>}
 */
export async function loadBackup(path, audit) {
  /** @typedef {{channel?: {provider?: unknown, model?: unknown} | null} | null | undefined} BackupDoc - the file's JSON, checked below */
  /** @type {BackupDoc} */
  let doc;
  try {
    doc = /** @type {BackupDoc} */ (await file(path, audit).load());
  } catch (e) {
    audit({ type: 'backup-ignored', reason: String(e?.message ?? e).slice(0, 200) });
    return undefined;
  }
  if (doc === undefined || doc?.channel === null) return undefined;
  if (valid(doc?.channel)) return { provider: doc.channel.provider, model: doc.channel.model };
  audit({ type: 'backup-ignored', reason: 'no {channel: {provider, model}}' });
  return undefined;
}

/**
 * Writes the choice (undefined: no backup); throws when it cannot.
 * @param {string} path
 * @param {{provider: string, model: string} | undefined} channel
 * @param {(record: object) => void} audit
 */
export async function saveBackup(path, channel, audit) {
  await file(path, audit).update((doc) => ({
    channel: channel ? { provider: channel.provider, model: channel.model } : null,
    v: (Number.isSafeInteger(/** @type {{v?: unknown} | null | undefined} */ (doc)?.v) ? /** @type {{v: number}} */ (doc).v : 0) + 1,
  }));
}

/** @import { Channel } from './policy-types.js' */

/**
 * The one write path for the backup: `/resilience backup`, the web chip and
 * the settings card all come here, so they never disagree. The module holds
 * it (set-backup) and answers it (`engine.backup()`, WIT `preferences`):
 * this keeps only the file it outlives the process in.
 */
export class Backup {
  /**
   * @param {object} o
   * @param {string} o.path - backup.json.
   * @param {import("@deepseek-ai/cordis").Context} o.ctx - the host's llm service resolves a model.
   * @param {(event: any) => unknown} o.step - tells the module (undefined: it failed).
   * @param {(record: object) => void} o.report
   * @param {(record: object) => void} o.decided - the dock's last decision.
   * @param {(llm: any, channel: Channel) => unknown} o.describe - asks the host about the new target.
   * @param {AbortSignal} o.signal
   */
  constructor({ path, ctx, step, report, decided, describe, signal }) {
    this.path = path;
    this.ctx = ctx;
    this.step = step;
    this.report = report;
    this.decided = decided;
    this.describe = describe;
    this.signal = signal;
  }

  /** Reads what the last process left, for the module's bring-up. */
  load() {
    return loadBackup(this.path, this.report);
  }

  /**
   * Sets (or clears) the backup. A model the host cannot resolve is refused
   * (it would end the turn with UNKNOWN_MODEL).
   * @param {Channel | undefined} channel
   * @param {string} source - command, web or settings.
   * @returns {Promise<string | undefined>} why it was refused, or undefined.
   */
  async set(channel, source) {
    const llm = this.ctx.get('llm');
    if (channel && llm) {
      const known = await llm.resolveModelInfo(channel.provider, channel.model, this.signal).then(() => true, () => false);
      if (!known) return `dsh-resilience: the host knows no model ${channel.provider}/${channel.model}`;
    }
    if (!this.step(setBackupEvent(channel))) return 'dsh-resilience: the policy module failed; see the audit log';
    const record = { type: 'backup', channel: channel ? channelId(channel) : null, source };
    this.report(record);
    this.decided(record);
    await saveBackup(this.path, channel, this.report).catch((e) => this.report({ type: 'backup-not-saved', reason: String(e.message).slice(0, 200) }));
    if (channel && llm) this.describe(llm, channel);
    return undefined;
  }
}
