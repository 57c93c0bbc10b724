// @ts-check
// Per-session settings (`/resilience quota`, `/resilience pool`, and the
// session's home and the user's model pick as the module reports them)
// outlive the process: a file under the plugin's state directory, keyed by
// session id, written atomically. Home and pick are never inherited: a fork
// starts where its host starts it. Headless profiles mount no storage domain, so the
// file is the one store everywhere; it is never silently process-local. A
// forked or delegated session takes its nearest ancestor's explicit setting
// once, as a snapshot: later changes to the ancestor do not follow it.
// Host processes sharing a DSH_HOME share the file: every save merges what
// is on disk first, the newer record per session winning, so no process
// erases another's setting.
import { readFile, rename } from 'node:fs/promises';
import { writeJsonAtomic } from './atomic.js';

/** How far up a lineage an inherited setting is looked for. */
const MAX_DEPTH = 32;
/** Sessions kept; the oldest settings are dropped past it. */
const MAX_SESSIONS = 10_000;

export class QuotaSettings {
  constructor(path, audit) {
    this.path = path;
    this.audit = audit;
    this.sessions = new Map(); // id -> {quota?, pool?, home?, pick?, parent?, at}
    this.queue = Promise.resolve();
  }

  async load() {
    let text;
    try {
      text = await readFile(this.path, 'utf8');
    } catch {
      return;
    }
    try {
      this.merge(JSON.parse(text));
    } catch (e) {
      const aside = `${this.path}.corrupt-${Date.now()}`;
      await rename(this.path, aside).catch(() => {});
      this.audit({ type: 'quota-settings-set-aside', file: aside, reason: String(e.message).slice(0, 200) });
    }
  }

  /** Takes each session record of doc that is newer than the one held. */
  merge(doc) {
    for (const [id, s] of Object.entries(doc?.sessions ?? {})) {
      if (!s || typeof s !== 'object') continue;
      const mine = this.sessions.get(id);
      if (!mine || (Number(s.at) || 0) > (Number(mine.at) || 0)) this.sessions.set(id, s);
    }
  }

  get(id) {
    return this.sessions.get(id);
  }

  /**
   * The session's own settings; on first sight, a snapshot of its nearest
   * ancestor's explicit ones (recorded as the session's own).
   * @returns {{quota?: string, pool?: string}}
   */
  adopt(id, parent) {
    let own = this.sessions.get(id);
    if (own) return own;
    own = { at: Date.now() };
    if (parent) own.parent = parent;
    let p = parent;
    for (let i = 0; p && i < MAX_DEPTH; i++) {
      const s = this.sessions.get(p);
      if (!s) break;
      if (own.quota === undefined && s.quota !== undefined) own.quota = s.quota;
      if (own.pool === undefined && s.pool !== undefined) own.pool = s.pool;
      if (own.quota !== undefined && own.pool !== undefined) break;
      p = s.parent;
    }
    this.sessions.set(id, own);
    if (own.quota !== undefined || own.pool !== undefined) {
      this.audit({ type: 'quota-settings-inherited', session: id, from: parent, quota: own.quota, pool: own.pool });
      this.save();
    } else if (parent) {
      this.save(); // keep the lineage for its own descendants
    }
    return own;
  }

  /** Sets (value) or clears (undefined) one key of a session's settings and saves. */
  set(id, key, value) {
    const s = this.sessions.get(id) ?? { at: Date.now() };
    if (value === undefined) delete s[key];
    else s[key] = value;
    s.at = Date.now();
    this.sessions.set(id, s);
    return this.save();
  }

  /** Sets (value) or clears (undefined) several keys at once, and saves. */
  update(id, values) {
    const s = this.sessions.get(id) ?? { at: Date.now() };
    for (const [key, value] of Object.entries(values)) {
      if (value === undefined) delete s[key];
      else s[key] = value;
    }
    s.at = Date.now();
    this.sessions.set(id, s);
    return this.save();
  }

  save() {
    this.queue = this.queue.then(async () => {
      try {
        this.merge(JSON.parse(await readFile(this.path, 'utf8')));
      } catch {
        // missing or unreadable: ours is what there is
      }
      while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value);
      await writeJsonAtomic(this.path, { sessions: Object.fromEntries(this.sessions) });
    }).catch((e) => this.audit({ type: 'quota-settings-not-saved', reason: String(e?.message).slice(0, 200) }));
    return this.queue;
  }
}
