// @ts-check
// The policy module behind a fail-open wrapper: decisions come from the wasm
// module; a trap or a broken answer is logged once per kind, the instance is
// rebuilt (told again everything the old one knew: config, channel health
// with the exhaustion marks in it, the user's backup, model info), and the caller falls back to the host's own
// behaviour for that one event.
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ModuleInstance, ModuleError, TrapError } from './kernel.js';
import { now as clockNow } from './clock.js';

/** @import { Event, Health, QuotaReport, ResolvedConfig, Restored, StepOutput } from './policy-types.js' */

export const WASM_PATH = fileURLToPath(new URL('../build/dsh-resilience.wasm', import.meta.url));

let compiling;
/** Compiles the module once per process; every plugin activation shares it. */
export function compileModule(path = WASM_PATH) {
  compiling ??= readFile(path).then((bytes) => WebAssembly.compile(bytes));
  return compiling;
}

/**
 * JSON.stringify turns NaN and Infinity (YAML `.nan`, `.inf`) into null,
 * which reads as "not set": sent as strings, the module refuses them naming
 * the key (wit/policy.wit, the JSON mapping).
 */
const nonFinite = (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value);

export class Policy {
  /**
   * @param {WebAssembly.Module} compiled
   * @param {object} config - the policy's part of the config row (WIT `config`,
   *   as the user wrote it: the module checks it, naming a bad key).
   * @param {{warn: Function}} logger
   * @param {(record: object) => void} [report] - receives the first failure of
   *   each kind (headless DSH exports no logs, so the shim audits them too).
   * @param {(record: object) => void} [record] - receives every policy input
   *   (see `inputRecord`), for the what-if replay (`make replay`).
   * @throws {Error} naming the offending key when the config is invalid.
   */
  constructor(compiled, config, logger, report = () => {}, record = () => {}) {
    this.compiled = compiled;
    this.configJson = JSON.stringify(config, nonFinite);
    this.logger = logger;
    this.report = report;
    this.record = record;
    // Channel health for a rebuilt instance: the last snapshot's JSON, taken
    // lazily (on save, or on rebuild when breakers changed since), never per
    // decision: at 100 channels one snapshot cost more than the decision.
    this.health = undefined;
    this.healthDirty = false;
    // What the module was told besides health, replayed into a rebuilt
    // instance: the last set-backup, and model info per channel.
    this.backupEvent = undefined;
    this.modelInfo = new Map(); // JSON of the channel -> model-info event
    // (resolved config, nowMs) -> more events for a rebuilt or reconfigured
    // instance (none now: exhaustion marks travel in health).
    this.retellers = [];
    this.failures = new Map(); // kind -> count, for "log once"
    this.instance = new ModuleInstance(compiled);
    try {
      /** @type {ResolvedConfig} */
      this.resolved = JSON.parse(this.instance.call('configure', this.configJson)).config;
    } catch (e) {
      throw new Error(`dsh-resilience: ${e.message.replace(/^configure: /, '')}`);
    }
    // A plain copy: the row's config object is the host's own (a reactive proxy), not ours to hold.
    this.record({ type: 'input', export: 'configure', config: JSON.parse(this.configJson) });
  }

  /**
   * One policy step. Returns the step output, or undefined when the module
   * failed: the caller must then do what the host would have done without us.
   * @param {number} nowMs
   * @param {Event} event
   * @returns {StepOutput | undefined}
   */
  decide(nowMs, event) {
    this.record(inputRecord(nowMs, event));
    try {
      /** @type {StepOutput} */
      const out = JSON.parse(this.instance.call('decide', JSON.stringify({ nowMs, event })));
      this.remember(event);
      for (const fx of out.effects) if (fx.kind === 'circuit') this.healthDirty = true;
      return out;
    } catch (e) {
      this.fail(e, event.kind);
      return undefined;
    }
  }

  /**
   * Keeps what a rebuilt instance must be told again (the module took it).
   * @param {Event} event
   */
  remember(event) {
    if (event.kind === 'set-backup') this.backupEvent = event;
    if (event.kind === 'model-info') this.modelInfo.set(JSON.stringify([event.channel.provider, event.channel.model]), event);
  }

  /**
   * Tells another instance what this one was told besides its config and
   * health: the user's backup, the model info, and what the retellers add.
   * A rebuilt or reconfigured module must not forget them.
   * @param {object} [resolved] - the config the instance runs (a reconfigured
   *   one's own: whether its quota rules apply decides what it is told).
   */
  retell(instance, nowMs = clockNow(), resolved = this.resolved) {
    const extra = this.retellers.flatMap((events) => events(resolved, nowMs));
    for (const event of [this.backupEvent, ...this.modelInfo.values(), ...extra]) {
      if (!event) continue;
      this.record(inputRecord(nowMs, event)); // the replay tells its instances the same
      instance.call('decide', JSON.stringify({ nowMs, event }));
    }
  }

  /**
   * The quota rules' state (WIT `quota-report`); undefined when the module failed.
   * @param {number} nowMs
   * @param {string} [agent]
   * @returns {QuotaReport | undefined}
   */
  inspect(nowMs, agent) {
    try {
      return JSON.parse(this.instance.call('inspect', JSON.stringify(agent === undefined ? { nowMs } : { nowMs, agent })));
    } catch (e) {
      this.fail(e, 'inspect');
      return undefined;
    }
  }

  /**
   * Channel health as the module reports it now (WIT `health`).
   * @returns {Health | undefined}
   */
  snapshot() {
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
   * nowMs: a record replaces the module's own when it changed later; a bad
   * record is skipped and named.
   * @param {string} json
   * @param {number} [nowMs]
   * @returns {Restored}
   * @throws {ModuleError} when the module refuses the document as a whole (not
   *   a health batch, nested too deep, too many records).
   */
  restore(json, nowMs = clockNow()) {
    const input = restoreInput(json, nowMs); // a SyntaxError is the document's, not the module's
    try {
      const out = JSON.parse(this.instance.call('restore', input));
      if (out.adopted > 0) this.healthDirty = true;
      if (out.adopted > 0) this.record({ type: 'input', export: 'restore', nowMs: JSON.parse(input).nowMs, health: JSON.parse(json) });
      return out;
    } catch (e) {
      if (!(e instanceof ModuleError)) this.fail(e, 'restore'); // a trap: rebuild, the file is not to blame
      throw e;
    }
  }

  fail(error, what) {
    const kind = `${error?.name ?? 'Error'}:${what}`;
    const n = (this.failures.get(kind) ?? 0) + 1;
    this.failures.set(kind, n);
    if (n === 1) {
      const message = String(error?.message ?? error);
      this.logger.warn('dsh-resilience: policy module failed on %s; the host decides (logged once per kind): %s', what, message);
      this.report({ type: 'module-failure', what, error: error?.name ?? 'Error', message: message.slice(0, 500) });
    }
    if (error instanceof TrapError) this.rebuild();
  }

  /** How often each kind of failure happened: `{"TrapError:request": 3}`. */
  failureCounts() {
    return Object.fromEntries(this.failures);
  }

  rebuild() {
    if (this.healthDirty) {
      // The trapped instance's memory is still readable, and its snapshot is
      // newer than the last save's. If it cannot answer, the last save's it is.
      try {
        const text = this.instance.call('snapshot', '{}');
        JSON.parse(text);
        this.health = text;
      } catch { /* keep the last saved snapshot */ }
    }
    try {
      const fresh = new ModuleInstance(this.compiled);
      fresh.call('configure', this.configJson);
      const now = clockNow();
      if (this.health) fresh.call('restore', restoreInput(this.health, now));
      // For the replay: a new instance, the same config, its own health carried
      // over; then what it is retold (recorded by retell, so after this).
      this.record({ type: 'input', export: 'configure', nowMs: now, config: JSON.parse(this.configJson), rebuild: true });
      this.retell(fresh, now);
      this.instance = fresh;
    } catch (e) {
      // Keep the broken instance: every call fails open until a rebuild works.
      if (!this.failures.has('rebuild')) this.logger.warn('dsh-resilience: could not rebuild the policy module: %s', e.message);
      this.failures.set('rebuild', (this.failures.get('rebuild') ?? 0) + 1);
    }
  }
}

/** A health document (JSON text) as the restore input at nowMs (WIT `restore-input`). */
function restoreInput(json, nowMs) {
  const health = JSON.parse(json);
  const isObject = health !== null && typeof health === 'object' && !Array.isArray(health);
  // Anything else is the module's to reject, with its own wording.
  return isObject ? JSON.stringify({ ...health, nowMs: Math.max(0, Math.floor(nowMs)) }) : json;
}

/**
 * The audit record of one decide input, exactly as the module receives it, so
 * a night's log can be replayed under another config. It carries no prompt
 * text, tool arguments or credentials: events hold none, and a tool
 * failure's message (which may quote the tool's input) is left out, its code kept.
 */
export function inputRecord(nowMs, event) {
  if (event.kind === 'tool-result' && event.failure) {
    event = { ...event, failure: { ...event.failure, message: '' } };
  }
  return { type: 'input', export: 'decide', nowMs, event };
}

export { TrapError, ModuleError };
