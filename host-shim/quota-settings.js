// @ts-check
// Per-session settings (`/resilience quota`, `/resilience pool`, and the
// session's home and the user's model pick as the module reports them)
// outlive the process: a file under the plugin's state directory, keyed by
// session id. Home and pick are never inherited: a fork starts where its host
// starts it. Headless profiles mount no storage domain, so the file is the one store
// everywhere; it is never silently process-local. A forked or delegated
// session takes its nearest ancestor's explicit setting once, as a snapshot:
// later changes to the ancestor do not follow it.
// Host processes sharing a DSH_HOME share the file through the keyed store
// (keyed-store.js): each change is applied under the file's lock to the
// session's record as it is on disk, so no process erases another's setting,
// and one session's switch and pool set by two hosts both land.
import { KeyedStore } from './keyed-store.js';

/** How far up a lineage an inherited setting is looked for. */
const MAX_DEPTH = 32;
/** Sessions kept; the least recently set are dropped past it. */
const MAX_SESSIONS = 10_000;

export class QuotaSettings {
  constructor(path, audit) {
    this.audit = audit;
    this.store = new KeyedStore(path, {
      records: {
        setAside: { type: 'quota-settings-set-aside' }, notRead: { type: 'quota-settings-ignored' },
        notSaved: { type: 'quota-settings-not-saved' }, saved: { type: 'quota-settings-saved' },
      },
      field: 'sessions',
      audit,
      prune: (records) => {
        if (records.size <= MAX_SESSIONS) return;
        const oldest = [...records].sort(([, a], [, b]) => (Number(a.at) || 0) - (Number(b.at) || 0));
        for (const [id] of oldest.slice(0, records.size - MAX_SESSIONS)) records.delete(id);
      },
    });
  }

  /** Settles when every change asked for so far is written (or its failure audited). */
  get queue() {
    return this.store.queue;
  }

  load() {
    return this.store.load();
  }

  get(id) {
    return this.store.get(id);
  }

  /**
   * The session's own settings; on first sight, a snapshot of its nearest
   * ancestor's explicit ones (recorded as the session's own).
   * @returns {{quota?: string, pool?: string}}
   */
  adopt(id, parent) {
    const held = this.store.get(id);
    if (held) return held;
    const own = { at: Date.now() };
    if (parent) own.parent = parent;
    let p = parent;
    for (let i = 0; p && i < MAX_DEPTH; i++) {
      const s = this.store.get(p);
      if (!s) break;
      if (own.quota === undefined && s.quota !== undefined) own.quota = s.quota;
      if (own.pool === undefined && s.pool !== undefined) own.pool = s.pool;
      if (own.quota !== undefined && own.pool !== undefined) break;
      p = s.parent;
    }
    if (own.quota !== undefined || own.pool !== undefined) {
      this.audit({ type: 'quota-settings-inherited', session: id, from: parent, quota: own.quota, pool: own.pool });
    }
    // A setting another host wrote meanwhile is the session's own: it wins.
    const write = (r) => r ?? own;
    if (own.quota !== undefined || own.pool !== undefined || parent) {
      this.store.change(id, write); // kept for the session's own descendants too
    } else {
      this.store.records.set(id, own); // nothing worth a write
    }
    return this.store.get(id);
  }

  /** Sets (value) or clears (undefined) one key of a session's settings and saves. */
  set(id, key, value) {
    const at = Date.now();
    return this.store.change(id, (r) => {
      const s = { ...r, at };
      if (value === undefined) delete s[key];
      else s[key] = value;
      return s;
    });
  }

  /** Sets (value) or clears (undefined) several keys at once, and saves. */
  update(id, values) {
    const at = Date.now();
    return this.store.change(id, (r) => {
      const s = { ...r, at };
      for (const [key, value] of Object.entries(values)) {
        if (value === undefined) delete s[key];
        else s[key] = value;
      }
      return s;
    });
  }

  save() {
    return this.store.save();
  }
}
