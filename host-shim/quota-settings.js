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

/** @import { Channel } from './policy-types.js' */

/**
 * A session's own settings, as quota-sessions.json keeps them.
 * @typedef {object} SessionSettings
 * @property {number} at - when they last changed (the least recent are dropped first)
 * @property {string} [parent] - the session it was forked or delegated from
 * @property {string} [quota] - its quota switch: on or off (none: the default)
 * @property {string} [pool] - its pool's name, or off (none: the default)
 * @property {Array<'quota' | 'pool'>} [inherited] - which of the two are its ancestor's, taken as a snapshot (reported `inherited`)
 * @property {Channel} [home] - where it belongs while failed over, as the module said
 * @property {Channel} [pick] - the user's model pick, as the module said
 * @property {number} [v] - the record's version in the file (keyed-store.js)
 */

/** A setting one write changes. @typedef {'quota' | 'pool' | 'home' | 'pick'} SettingKey */

/** How far up a lineage an inherited setting is looked for. */
const MAX_DEPTH = 32;
/** Sessions kept; the least recently set are dropped past it. */
const MAX_SESSIONS = 10_000;

export class QuotaSettings {
  /**
   * @param {string} path - quota-sessions.json
   * @param {(record: object) => void} audit
   */
  constructor(path, audit) {
    this.audit = audit;
    /** @type {KeyedStore<SessionSettings>} */
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

  /** @param {string} id - a session id */
  get(id) {
    return this.store.get(id);
  }

  /**
   * The session's own settings; on first sight, a snapshot of its nearest
   * ancestor's explicit ones (recorded as the session's own).
   * @param {string} id
   * @param {string} [parent] - the session it was forked or delegated from
   * @returns {SessionSettings | undefined}
   */
  adopt(id, parent) {
    const held = this.store.get(id);
    if (held) return held;
    /** @type {SessionSettings} */
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
      own.inherited = /** @type {Array<'quota' | 'pool'>} */ (['quota', 'pool'].filter((k) => own[/** @type {'quota' | 'pool'} */ (k)] !== undefined));
      this.audit({ type: 'quota-settings-inherited', session: id, from: parent, quota: own.quota, pool: own.pool });
    }
    // A setting another host wrote meanwhile is the session's own: it wins.
    /** @param {SessionSettings | undefined} r */
    const write = (r) => r ?? own;
    if (own.quota !== undefined || own.pool !== undefined || parent) {
      this.store.change(id, write); // kept for the session's own descendants too
    } else {
      this.store.records.set(id, own); // nothing worth a write
    }
    return this.store.get(id);
  }

  /**
   * Sets (value) or clears (undefined) one key of a session's settings and saves.
   * @template {SettingKey} K
   * @param {string} id
   * @param {K} key
   * @param {SessionSettings[K]} value
   */
  set(id, key, value) {
    const at = Date.now();
    return this.store.change(id, (r) => {
      /** @type {SessionSettings} */
      const s = { ...r, at };
      if (value === undefined) delete s[key];
      else s[key] = value;
      ownSetting(s, key);
      return s;
    });
  }

  /**
   * Sets (value) or clears (undefined) several keys at once, and saves.
   * @param {string} id
   * @param {Partial<Pick<SessionSettings, SettingKey>>} values
   */
  update(id, values) {
    const at = Date.now();
    return this.store.change(id, (r) => {
      /** @type {SessionSettings} */
      const s = { ...r, at };
      for (const [key, value] of Object.entries(values)) {
        const k = /** @type {SettingKey} */ (key);
        if (value === undefined) delete s[k];
        else /** @type {Record<SettingKey, unknown>} */ (s)[k] = value; // Object.entries loses which key holds which type
        ownSetting(s, k);
      }
      return s;
    });
  }

  save() {
    return this.store.save();
  }
}

/**
 * A key the session set (or cleared) itself is its own from then on: no longer its ancestor's.
 * @param {SessionSettings} s - changed in place
 * @param {SettingKey} key
 */
function ownSetting(s, key) {
  if (!s.inherited || (key !== 'quota' && key !== 'pool')) return;
  const left = s.inherited.filter((k) => k !== key);
  if (left.length) s.inherited = left;
  else delete s.inherited;
}
