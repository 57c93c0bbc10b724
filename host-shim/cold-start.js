// @ts-check
// The cold start: a new session's first request sent before the module is up.
//
// Bringing the module up (the guest's compile, the Go runtime's start,
// configure, restore) costs the host's main thread about 30 ms, and a
// headless run's first request waited for it. The module's snapshot says
// when it need not (`cold-pass`, policy/coldpass.go): started from this
// health under this config, it would pass any new session's first request
// as proposed. The shim keeps that word here, beside health.json, with the
// config it holds for; the next process reads it at activation and, when it
// holds, brings the module up behind the first request instead of before
// it. The module is told of each request so passed once it is up, and a
// pass it would not have made is audited (`cold-pass-missed`): that request
// went as the host alone would have sent it, and its failure, if any, is
// decided as any other.
//
// Written only under the health file's lock, right after health.json: so it
// always speaks of the records beside it, whichever process wrote last.
//
// A first run has no snapshot to carry a word, and needs none: from no
// health records, the module's word is its config's part alone, which it
// gives at build time as the row keys that route new sessions by rule
// (RULE_KEYS, policy/coldpass.go). A home with neither file and a row
// without those keys starts cold too, once the module has checked the row
// (Engine.validate: a refused key still ends the first turn before any
// request); health shared through Redis may hold other hosts' records, so a
// row that shares it waits.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULE_KEYS } from './policy-defaults.js';
import { StateFile } from './store.js';

/**
 * The module's word for a run with no health records yet: whether its first
 * request may go cold. Read at activation, before anything writes the state
 * directory: two stats.
 * @param {string} stateDir
 * @param {Record<string, unknown>} row - the policy config, as the module is given it
 * @param {boolean} shared - health is shared through Redis
 */
export function firstRunWord(stateDir, row, shared) {
  if (shared || RULE_KEYS.some((k) => row[k] !== undefined && row[k] !== null)) return false;
  return !existsSync(join(stateDir, 'health.json')) && !existsSync(join(stateDir, 'cold-start.json'));
}

/**
 * A first look at the word, at activation, before anything async: whether
 * the module's compile can wait for the bring-up. Only a hint; `allows`
 * reads the file again and decides (and sets a bad file aside). The file is
 * a few hundred bytes: read at once, it costs the main thread microseconds,
 * where a read through libuv's pool, which the host's boot keeps busy, could
 * come back after the first request.
 * @param {string} path - cold-start.json
 * @param {string} configJson
 */
export function coldStartLikely(path, configJson) {
  try {
    const doc = JSON.parse(readFileSync(path, 'utf8'));
    return doc?.config === configJson && doc.coldPass === true;
  } catch {
    return false;
  }
}

export class ColdStart {
  /**
   * @param {string} path - cold-start.json in the state directory.
   * @param {(record: object) => void} audit
   * @param {boolean} [firstRun] - firstRunWord's answer: with no file, the word.
   */
  constructor(path, audit, firstRun = false) {
    this.file = new StateFile(path, { audit, setAside: { type: 'cold-start-set-aside' } });
    this.firstRun = firstRun;
    /** @type {{config: string, coldPass: boolean} | undefined} what the file says (as read or last written) */
    this.onDisk = undefined;
  }

  /**
   * Whether the last process's module allowed a cold pass under `configJson`
   * (the engine's config, as the row gives it). A file that does not parse is
   * set aside; no file, another config or any error: no.
   * @param {string} configJson
   */
  async allows(configJson) {
    try {
      const doc = /** @type {{config?: unknown, coldPass?: unknown} | null | undefined} */ (await this.file.load()); // checked next
      if (doc === undefined) return this.firstRun;
      if (typeof doc?.config === 'string') this.onDisk = { config: doc.config, coldPass: doc.coldPass === true };
    } catch {
      return false;
    }
    return this.onDisk?.config === configJson && this.onDisk.coldPass;
  }

  /**
   * Whether the file says something else than `coldPass` for `configJson`.
   * @param {string} configJson
   * @param {boolean} coldPass
   */
  differs(configJson, coldPass) {
    return this.onDisk === undefined || this.onDisk.config !== configJson || this.onDisk.coldPass !== coldPass;
  }

  /**
   * Writes the module's word for `configJson` when the file says otherwise.
   * Call holding the health file's lock (HealthStore's `saved`).
   * @param {string} configJson
   * @param {boolean} coldPass
   */
  async note(configJson, coldPass) {
    if (!this.differs(configJson, coldPass)) return;
    await this.file.write({ config: configJson, coldPass });
    this.onDisk = { config: configJson, coldPass };
  }
}
