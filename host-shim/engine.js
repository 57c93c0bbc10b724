// @ts-check
// The policy module's whole life behind a few verbs: bring up, step,
// inspect, dispose. Every instance the shim ever runs comes from ONE bring-up
// sequence (configure → restore health → backup → model info → session
// settings), whether it is the first (activation), a replacement after a trap
// (recovery) or one running a new config (live reconfigure): a new instance
// must never know less than the one it replaces, and one path keeps that true.
// A trap or a broken answer is logged once per kind and the caller falls back
// to the host's own behaviour for that one event (fail open).
// Each step's effects go out to the subscribers registered here; adapters
// talk only to the engine.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ModuleInstance, ModuleError, TrapError } from './kernel.js';
import { now as clockNow } from './clock.js';
import { setBackupEvent } from './events.js';

/** @import { Channel, ChannelHealth, Configured, Event, Health, Persisted, PolicyExports, ResolvedConfig, Restored, SettingsCard, SharedWrite, StepOutput } from './policy-types.js' */

export const WASM_PATH = fileURLToPath(new URL('../build/dsh-resilience.wasm', import.meta.url));

/** @type {Promise<WebAssembly.Module> | undefined} */
let compiling;
/**
 * Compiles the module once per process; every activation shares it. Started
 * first thing at activation and not awaited there, so it overlaps the rest of
 * activation and the host's boot (or, on a cold start, at the bring-up's
 * kick: lifetime.js).
 * Read at once, not through fs/promises: while the host boots, libuv's four
 * threads are busy with its files, and the 4.5 MB came back ~150 ms after
 * activation in 512 KB round trips through that queue; from the page cache
 * the read takes the main thread 2-6 ms.
 * Compiled lazily, as V8 does by default: compiling every function up front
 * on V8's background threads took the bring-up's compiling off the main
 * thread (~30 ms) but cost ~130 ms of CPU on the other core, and on a 2-core
 * machine the host's main thread then waited ~40 ms longer for a core: the
 * first request came later, not sooner (RATIONALE.md, start-up).
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileModule(path = WASM_PATH) {
  if (!compiling) {
    try {
      compiling = WebAssembly.compile(/** @type {Uint8Array<ArrayBuffer>} */ (readFileSync(path)));
    } catch (e) {
      compiling = Promise.reject(e);
    }
  }
  return compiling;
}

/**
 * JSON.stringify turns NaN and Infinity (YAML `.nan`, `.inf`) into null,
 * which reads as "not set": sent as strings, the module refuses them naming
 * the key (wit/policy.wit, the JSON mapping).
 */
/** @param {string} _key @param {unknown} value */
const nonFinite = (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);

/**
 * The config as the module is given it (and as the cold start's word is kept for).
 * @param {object} config
 */
export const configText = (config) => JSON.stringify(config, nonFinite);

/** Why `ready` rejects when the engine was disposed before its bring-up. */
export class DisposedError extends Error {
  constructor() {
    super('dsh-resilience was disposed before its bring-up');
    this.name = 'DisposedError';
  }
}

/** What stands for provider text the module could not check (it is not up, or failed). */
export const WITHHELD = '[withheld: the policy module is not up to redact it]';

/** A config the module refused: the user's to fix, so it is never failed open. */
export class ConfigError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * @typedef {object} Instance
 * @property {ModuleInstance} module
 * @property {ResolvedConfig} resolved
 * @property {boolean} hedging - the module's word: the config hedges first tokens
 * @property {string} configJson
 * @property {Restored} [restored] - what the health restore took, when it ran.
 */

export class Engine {
  /**
   * @param {WebAssembly.Module | Promise<WebAssembly.Module>} compiled - a module
   *   brings the engine up at once (and throws on a bad config); a promise
   *   leaves it down until `start()`.
   * @param {object} config - the policy's part of the config row (WIT `config`,
   *   as the user wrote it: the module checks it, naming a bad key).
   * @param {{warn: Function}} logger
   * @param {(record: object) => void} [report] - receives the first failure of
   *   each kind (headless DSH exports no logs, so the shim audits them too).
   * @param {(record: object) => void} [record] - receives every policy input
   *   (see `inputRecord`), for the what-if replay (`make replay`).
   * @throws {ConfigError} naming the offending key when the config is invalid.
   */
  constructor(compiled, config, logger, report = () => {}, record = () => {}) {
    this.configJson = configText(config);
    this.logger = logger;
    this.report = report;
    this.record = record;
    // Channel health for a new instance: the last snapshot's JSON, taken
    // lazily (on save, or on rebuild when breakers changed since), never per
    // decision: at 100 channels one snapshot cost more than the decision.
    /** @type {string | undefined} */
    this.health = undefined;
    this.healthDirty = false;
    // What the module was told besides its config and health, told again to
    // every new instance: the last set-backup, and model info per channel.
    // Inputs, not state: nothing reads them but a bring-up (a trapped
    // instance may not answer for them); what the module holds is asked of
    // it (`backup()`, WIT `preferences`).
    /** @type {Event | undefined} */
    this.backupEvent = undefined;
    /** @type {Map<string, Event>} JSON of the channel -> model-info event */
    this.modelInfo = new Map();
    // The credential values the module redacts provider text by (redaction.js):
    // told to every new instance, never recorded (the replay has no use for them).
    /** @type {string[]} */
    this.secretValues = [];
    /**
     * The session settings for an instance running `resolved`: the quota
     * shell supplies them (exhaustion marks come with the health).
     * @type {(resolved: ResolvedConfig, nowMs: number) => Event[]}
     */
    this.settings = () => [];
    /** @type {Array<(out: StepOutput, event: Event) => void>} */
    this.subscribers = [];
    /** @type {Map<string, number>} kind -> count, for "log once" */
    this.failures = new Map();
    this.disposed = false;
    /** @type {ModuleInstance | undefined} */
    this.instance = undefined;
    /** @type {{module: ModuleInstance, configured: Configured, configJson: string} | undefined} an instance `validate` configured, for the bring-up */
    this.configured = undefined;
    /** @type {Promise<void> | undefined} */
    this.validating = undefined;
    /** @type {ResolvedConfig} undefined until the engine is up */
    this.resolved = /** @type {any} */ (undefined);
    /** Whether the running config hedges first tokens (WIT `configured.hedging`). */
    this.hedging = false;
    if (compiled instanceof WebAssembly.Module) {
      this.compiled = compiled;
      this.install(this.bringUp(this.configJson, undefined, 'activation'));
      this.ready = Promise.resolve(this);
    } else {
      /** @type {WebAssembly.Module | undefined} */
      this.compiled = undefined;
      this.pending = compiled;
      /** @type {Promise<Engine>} settles once `start()` has brought the engine up (or failed to) */
      this.ready = new Promise((resolve, reject) => { this.settle = { resolve, reject }; });
      this.ready.catch(() => {}); // a failure is the caller's, through start() or ready
    }
  }

  /** Whether an instance answers now. */
  get up() {
    return this.instance !== undefined;
  }

  /**
   * Activation: waits for the compiled module, then brings the first instance
   * up with what earlier runs left (the health file's text, the backup).
   * @param {{health?: string, backup?: Channel}} [facts]
   * @returns {Promise<Restored | undefined>} what the health restore took.
   * @throws {ConfigError} the module refused the config.
   */
  async start({ health, backup } = {}) {
    try {
      this.compiled ??= await this.pending;
      if (backup) this.backupEvent = setBackupEvent(backup);
      let up;
      try {
        up = this.bringUp(this.configJson, health, 'activation');
      } catch (e) {
        if (health === undefined || e instanceof ConfigError) throw e;
        up = this.bringUp(this.configJson, undefined, 'activation'); // the file is to blame: the store sets it aside
      }
      this.install(up);
      if (up.restored && up.restored.adopted > 0) this.healthDirty = true; // a recovery snapshots it
      this.settle?.resolve(this);
      return up.restored;
    } catch (e) {
      this.settle?.reject(e);
      throw e;
    }
  }

  /**
   * THE bring-up sequence: a fresh instance told everything a running one
   * knows. Throws (ConfigError when the module refuses the config) and leaves
   * the running instance as it is.
   * @param {string} configJson
   * @param {string | undefined} health - a health document (WIT `health`), JSON text.
   * @param {'activation' | 'recovery' | 'reconfigure'} why - for the replay record.
   * @returns {Instance}
   */
  bringUp(configJson, health, why) {
    const { module, configured } = this.configured?.configJson === configJson ? this.configured : this.configure(configJson);
    this.configured = undefined;
    const resolved = configured.config;
    if (this.secretValues.length > 0) module.call('secrets', JSON.stringify({ values: this.secretValues }));
    const now = clockNow();
    // A plain copy: the row's config object is the host's own (a reactive proxy), not ours to
    // hold; or the module's copy a log may hold, when the row names webhook URLs.
    const config = configured.recorded ?? JSON.parse(configJson);
    if (why === 'recovery') {
      // The replay restores its own last-known health on a rebuild record.
      if (health) module.call('restore', restoreInput(health, now));
      this.record({ type: 'input', export: 'configure', nowMs: now, config, rebuild: true });
    } else {
      this.record({ type: 'input', export: 'configure', config });
    }
    /** @type {Restored | undefined} */
    let restored;
    if (health && why !== 'recovery') {
      const input = restoreInput(health, now);
      try {
        restored = JSON.parse(module.call('restore', input));
        if (/** @type {Restored} */ (restored).adopted > 0) this.record({ type: 'input', export: 'restore', nowMs: JSON.parse(input).nowMs, health: JSON.parse(health) });
      } catch (e) {
        // A file the module refuses as a whole starts the engine without it
        // (the health store sets it aside); a running engine's own never is.
        if (why !== 'activation' || !(e instanceof ModuleError)) throw e;
      }
    }
    for (const event of [this.backupEvent, ...this.modelInfo.values(), ...this.settings(resolved, now)]) {
      if (!event) continue;
      this.record(inputRecord(now, event)); // the replay tells its instances the same
      module.call('decide', JSON.stringify({ nowMs: now, event }));
    }
    return { module, resolved, hedging: configured.hedging, configJson, restored };
  }

  /**
   * A new instance given the config, and nothing else yet.
   * @param {string} configJson
   * @returns {{module: ModuleInstance, configured: Configured, configJson: string}}
   * @throws {ConfigError} the module refused the config.
   */
  configure(configJson) {
    const module = new ModuleInstance(/** @type {WebAssembly.Module} */ (this.compiled));
    try {
      return { module, configured: JSON.parse(module.call('configure', configJson)), configJson };
    } catch (e) {
      if (e instanceof ModuleError) throw new ConfigError(`dsh-resilience: ${e.message.replace(/^configure: /, '')}`);
      throw e;
    }
  }

  /**
   * The module's check of the row, ahead of the bring-up: a first run sends
   * its first request before the module is up (cold-start.js firstRunWord),
   * but never with a row the module refuses. The instance it configured is
   * the one the bring-up then starts from.
   * @returns {Promise<void>}
   * @throws {ConfigError} the module refused the config.
   */
  validate() {
    this.validating ??= (async () => {
      this.compiled ??= await this.pending;
      if (!this.up) this.configured = this.configure(this.configJson);
    })();
    return this.validating;
  }

  /** @param {Instance} up */
  install(up) {
    this.instance = up.module;
    this.resolved = up.resolved;
    this.hedging = up.hedging;
    this.configJson = up.configJson;
  }

  /**
   * Live reconfigure: a new instance on `config`, brought up with the running
   * one's channel health; agent-level state (homes, failover counts) starts
   * afresh, as the next request re-learns it.
   * @param {object} config - the policy's part of the config row, as the user wrote it.
   * @returns {ResolvedConfig}
   * @throws {ConfigError} the module's message when it refuses the config; nothing changes then.
   */
  reconfigure(config) {
    const health = this.snapshot();
    const text = JSON.stringify(health ?? { channels: [] });
    this.install(this.bringUp(configText(config), text, 'reconfigure'));
    this.health = text;
    this.healthDirty = false;
    return this.resolved;
  }

  /**
   * Checks a policy config with the module itself, changing nothing.
   * @param {object} config
   * @returns {string | undefined} the module's message when it refuses the config.
   */
  check(config) {
    try {
      this.resolve(configText(config));
      return undefined;
    } catch (e) {
      return `dsh-resilience: ${String(e?.message ?? e).replace(/^resolve: /, '')}`;
    }
  }

  /**
   * The module's defaults: what a row with no keys (or only `config`'s) resolves to.
   * @param {object} [config]
   * @returns {ResolvedConfig}
   */
  defaults(config = {}) {
    return JSON.parse(this.resolve(JSON.stringify(config))).config;
  }

  /**
   * The module's `resolve` (a config checked and resolved, no state touched)
   * on the running instance. Before there is one (or after it failed for
   * good) a throwaway instance answers: the settings card asks for defaults
   * and a check as it registers, just as the first request is due, and a
   * second instance costs the main thread 10-20 ms there.
   * @param {string} configJson
   * @returns {string} the module's answer.
   * @throws {ModuleError} the module refused the config; {TrapError} it trapped.
   */
  resolve(configJson) {
    return this.spare('resolve', configJson);
  }

  /**
   * The web card's section read against the row (WIT `settings-card`),
   * answered as `resolve` is: by a throwaway instance before the module is up.
   * @param {object} row - the policy part of the row, as configured
   * @param {object} section
   * @returns {SettingsCard}
   */
  settingsCard(row, section) {
    return JSON.parse(this.spare('settings-card', JSON.stringify({ rowJson: configText(row), sectionJson: configText(section) })));
  }

  /** An export that changes nothing, on the running instance, else a throwaway one. @param {string} name @param {string} input */
  spare(name, input) {
    const module = this.instance ?? new ModuleInstance(/** @type {WebAssembly.Module} */ (this.compiled));
    try {
      return module.call(name, input);
    } catch (e) {
      if (module === this.instance && !(e instanceof ModuleError)) this.fail(e, name); // a trap: rebuild
      throw e;
    }
  }

  /** @param {(out: StepOutput, event: Event) => void} fn - receives every step's output. */
  subscribe(fn) {
    this.subscribers.push(fn);
  }

  /**
   * One step at the clock's time, its effects sent to the subscribers;
   * undefined when the module failed, is not up, or the engine is disposed
   * (the caller then does what the host would).
   * @param {Event} event
   */
  step(event) {
    if (this.disposed) return undefined;
    const out = this.decide(clockNow(), event);
    if (out) {
      for (const fn of this.subscribers) {
        try {
          fn(out, event);
        } catch (e) {
          this.fail(e, 'effects');
        }
      }
    }
    return out;
  }

  /**
   * One policy step without its effects carried out.
   * @param {number} nowMs
   * @param {Event} event
   * @returns {StepOutput | undefined}
   */
  decide(nowMs, event) {
    if (!this.instance) return undefined;
    // A model lookup's code is asked about on its own (once per target); a
    // failure's words come back redacted with the step's answer (`redacted`).
    if (event.kind === 'model-info') event = this.redactEvent(event);
    /** @type {StepOutput} */
    let out;
    try {
      out = JSON.parse(this.instance.call('decide', JSON.stringify({ nowMs, event })));
    } catch (e) {
      this.record(inputRecord(nowMs, unchecked(event))); // the module never said what it took
      this.fail(e, event.kind);
      return undefined;
    }
    event = taken(event, out.redacted);
    this.record(inputRecord(nowMs, event)); // what the module took: the provider's text as redacted
    this.remember(event);
    for (const fx of out.effects) if (fx.kind === 'circuit') this.healthDirty = true;
    return out;
  }

  /**
   * The credential values provider text is redacted by (redaction.js): the
   * running instance takes them now, every new one at its bring-up.
   * @param {string[]} values
   */
  setSecrets(values) {
    this.secretValues = values;
    if (this.instance) this.ask('secrets', { values });
  }

  /**
   * Texts the shim writes or passes on itself, redacted by the module's rule
   * (policy/redact): there is no copy of it here. Until the module is up, or
   * when it fails to answer, each text is withheld whole (WITHHELD): text that
   * cannot be checked is not written.
   * @param {string[]} texts
   * @returns {string[]}
   */
  redact(texts) {
    if (texts.length === 0) return texts;
    /** @type {{texts?: unknown} | undefined} */
    const answer = this.ask('redact', { texts });
    const out = answer?.texts;
    return Array.isArray(out) && out.length === texts.length ? out.map(String) : texts.map(() => WITHHELD);
  }

  /**
   * A failure's code and message as the shim may write them (redact()).
   * @template {{code: string, message?: string | null}} F
   * @param {F} failure
   * @returns {F}
   */
  redactFailure(failure) {
    const hasMessage = typeof failure.message === 'string';
    const [code, message] = this.redact(hasMessage ? [failure.code, /** @type {string} */ (failure.message)] : [failure.code]);
    return { ...failure, code, ...(hasMessage ? { message } : {}) };
  }

  /**
   * An event with the provider's words in it (a failure's code and message,
   * a model lookup's code) redacted: what the input record holds and the
   * module takes. Any other event is returned as it is.
   * @template {Event} E
   * @param {E} event
   * @returns {E}
   */
  redactEvent(event) {
    const e = /** @type {Event} */ (event);
    if ((e.kind === 'request-error' || e.kind === 'probe-result') && e.failure) {
      return /** @type {E} */ ({ ...e, failure: this.redactFailure(e.failure) });
    }
    if (e.kind === 'model-info' && e.code) return /** @type {E} */ ({ ...e, code: this.redact([e.code])[0] });
    return event;
  }

  /**
   * Keeps what a new instance must be told again (the module took it).
   * @param {Event} event
   */
  remember(event) {
    if (event.kind === 'set-backup') this.backupEvent = event;
    if (event.kind === 'model-info') this.modelInfo.set(JSON.stringify([event.channel.provider, event.channel.model]), event);
  }

  /**
   * The user's backup as the module holds it (WIT `preferences`): its one
   * holder while the process lives. Undefined: none, or no module answering.
   * @returns {Channel | undefined}
   */
  backup() {
    return this.ask('preferences', {})?.backup ?? undefined;
  }

  /**
   * An export on the running instance (most change nothing), typed by the
   * WIT world (PolicyExports): its answer, or undefined when there is no
   * instance or it failed (logged once).
   * @template {keyof PolicyExports} K
   * @param {K} name
   * @param {PolicyExports[K]['input']} input
   * @returns {PolicyExports[K]['output'] | undefined}
   */
  ask(name, input) {
    if (!this.instance) return undefined;
    try {
      return JSON.parse(this.instance.call(name, JSON.stringify(input)));
    } catch (e) {
      this.fail(e, name);
      return undefined;
    }
  }

  /**
   * Channel health as the module reports it now (WIT `health`).
   * @returns {Health | undefined}
   */
  snapshot() {
    if (!this.instance) return undefined;
    try {
      const text = this.instance.call('snapshot', '{}');
      this.health = text;
      this.healthDirty = false;
      return JSON.parse(text);
    } catch (e) {
      this.fail(e, 'snapshot');
      return undefined;
    }
  }

  /**
   * Merges a health snapshot (JSON text, WIT `health`) into the module at
   * nowMs: a record replaces the module's own when it wins the merge order;
   * a bad record is skipped and named. live: the health is news from a
   * process running now (a refresh, a record published through Redis),
   * received at nowMs, so an open the module has not seen starts then
   * (policy/merge.go); fromShared: the records came from the shared store,
   * which the module then knows holds them (policy/shared.go); the shim only
   * says where the health came from.
   * @param {string} json
   * @param {number} [nowMs]
   * @param {{live?: boolean, fromShared?: boolean}} [o]
   * @returns {Restored}
   * @throws {ModuleError} when the module refuses the document as a whole (not
   *   a health batch, nested too deep, too many records), or is not up.
   */
  restore(json, nowMs = clockNow(), { live = false, fromShared = false } = {}) {
    const input = restoreInput(json, nowMs, live, fromShared); // a SyntaxError is the document's, not the module's
    if (!this.instance) throw new ModuleError('the policy module is not up');
    try {
      const out = JSON.parse(this.instance.call('restore', input));
      if (out.adopted > 0 || fromShared) this.healthDirty = true; // the snapshot carries what the store holds
      if (out.adopted > 0) this.record({ type: 'input', export: 'restore', nowMs: JSON.parse(input).nowMs, ...(live ? { live } : {}), health: JSON.parse(json) });
      return out;
    } catch (e) {
      if (!(e instanceof ModuleError)) this.fail(e, 'restore'); // a trap: rebuild, the file is not to blame
      throw e;
    }
  }

  /**
   * The records the shared store needs, with their expiry (WIT
   * `shared-writes`); forget: it may have lost all it held (an outage).
   * Undefined when the module is not up or failed.
   * @param {boolean} forget
   * @returns {SharedWrite[] | undefined}
   */
  sharedWrites(forget) {
    if (forget) this.healthDirty = true;
    return this.ask('shared-writes', forget ? { forget } : {})?.writes;
  }

  /**
   * What the health file keeps at nowMs, and the cold-pass word beside it
   * (WIT `persist`). The snapshot is taken first: it is what a rebuild
   * starts from. Undefined when the module is not up or failed.
   * @param {number} nowMs
   * @returns {Persisted | undefined}
   */
  persist(nowMs) {
    if (!this.snapshot()) return undefined;
    return this.ask('persist', { nowMs: Math.max(0, Math.floor(nowMs)) });
  }

  /**
   * Tells the module records were written to the shared store (WIT `shared-written`).
   * @param {ChannelHealth[]} records - as `sharedWrites` answered them.
   */
  sharedWritten(records) {
    this.healthDirty = true; // a rebuild snapshots what the store holds
    this.ask('shared-written', { records });
  }

  /**
   * Logs and audits a failure once per kind; a trap also rebuilds the instance.
   * @param {unknown} error - whatever the call threw.
   * @param {string} what - the call that failed: an event kind or an export.
   */
  fail(error, what) {
    const thrown = /** @type {{name?: string, message?: string} | null | undefined} */ (error); // most often an Error
    const kind = `${thrown?.name ?? 'Error'}:${what}`;
    const n = (this.failures.get(kind) ?? 0) + 1;
    this.failures.set(kind, n);
    if (n === 1) {
      const message = String(thrown?.message ?? error);
      this.logger.warn('dsh-resilience: policy module failed on %s; the host decides (logged once per kind): %s', what, message);
      this.report({ type: 'module-failure', what, error: thrown?.name ?? 'Error', message: message.slice(0, 500) });
    }
    if (error instanceof TrapError) this.rebuild();
  }

  /** How often each kind of failure happened: `{"TrapError:request": 3}`. */
  failureCounts() {
    return Object.fromEntries(this.failures);
  }

  /** Recovery after a trap: the same bring-up, on the same config. */
  rebuild() {
    if (this.healthDirty && this.instance) {
      // The trapped instance's memory is still readable, and its snapshot is
      // newer than the last save's. If it cannot answer, the last save's it is.
      try {
        const text = this.instance.call('snapshot', '{}');
        JSON.parse(text);
        this.health = text;
      } catch { /* keep the last saved snapshot */ }
    }
    try {
      this.install(this.bringUp(this.configJson, this.health, 'recovery'));
    } catch (e) {
      // Keep the broken instance: every call fails open until a rebuild works.
      if (!this.failures.has('rebuild')) this.logger.warn('dsh-resilience: could not rebuild the policy module: %s', e.message);
      this.failures.set('rebuild', (this.failures.get('rebuild') ?? 0) + 1);
    }
  }

  /** No step after this: late timers and refreshes find the engine gone. */
  dispose() {
    this.disposed = true;
    this.subscribers = [];
    // A bring-up that never started never will: `ready` settles, so nothing waits on it past `stop`.
    this.settle?.reject(new DisposedError());
  }
}

/**
 * A health document (JSON text) as the restore input at nowMs (WIT `restore-input`).
 * @param {string} json
 * @param {number} nowMs
 * @returns {string}
 */
function restoreInput(json, nowMs, live = false, fromShared = false) {
  const health = JSON.parse(json);
  const isObject = health !== null && typeof health === 'object' && !Array.isArray(health);
  // Anything else is the module's to reject, with its own wording.
  return isObject ? JSON.stringify({ ...health, nowMs: Math.max(0, Math.floor(nowMs)), ...(live ? { live: true } : {}), ...(fromShared ? { fromShared: true } : {}) }) : json;
}

/**
 * The event as the module took it: a failure's code and message as redacted
 * (`redacted` of the step's answer, present when redaction changed them).
 * @param {Event} event
 * @param {import('./policy-types.js').Failure | null | undefined} redacted
 * @returns {Event}
 */
function taken(event, redacted) {
  if (!redacted || !((event.kind === 'request-error' || event.kind === 'probe-result') && event.failure)) return event;
  const { code, message } = redacted;
  return { ...event, failure: { ...event.failure, code, ...(message ? { message } : {}) } };
}

/**
 * An event whose failure the module could not check (its decide failed): the
 * provider's words are withheld from the record.
 * @param {Event} event
 * @returns {Event}
 */
function unchecked(event) {
  if (!((event.kind === 'request-error' || event.kind === 'probe-result') && event.failure)) return event;
  const { message, ...failure } = event.failure;
  return { ...event, failure: { ...failure, code: WITHHELD, ...(message ? { message: WITHHELD } : {}) } };
}

/**
 * The audit record of one decide input, exactly as the module receives it, so
 * a night's log can be replayed under another config. It carries no prompt
 * text, tool arguments or credentials: events hold none, and a tool
 * failure's message (which may quote the tool's input) is left out, its code kept.
 */
/**
 * @param {number} nowMs
 * @param {Event} event
 */
export function inputRecord(nowMs, event) {
  if (event.kind === 'tool-result' && event.failure) {
    event = { ...event, failure: { ...event.failure, message: '' } };
  }
  return { type: 'input', export: 'decide', nowMs, event };
}

export { TrapError, ModuleError };
