// @ts-check
// What this process does when the module asks (effect-shell.js maps the
// effects here): a wake timer, a probe, a held wait cut short, and the
// health file saved (debounced) and shared. It keeps only the handles of
// what it started, never a copy of what the module knows, and ends them
// all at dispose.
import { channelId } from './channel.js';
import { EVENTS } from './event-names.js';
import { emitCompat } from './compat-events.js';
import { probeResultEvent, wakeEvent } from './events.js';
import { runProbe } from './probe.js';
import { later } from './timers.js';
import { now as clockNow } from './clock.js';

/** @import { Channel, Event } from './policy-types.js' */

/** How long health changes gather before one save. */
const SAVE_DEBOUNCE_MS = 50;

export class Shell {
  /**
   * @param {object} o
   * @param {import("@deepseek-ai/cordis").Context} o.ctx - its llm service sends the probes.
   * @param {import('./engine.js').Engine} o.engine
   * @param {(event: Event) => unknown} o.step - one engine step, none after dispose.
   * @param {(record: object) => void} o.report - the audit log.
   * @param {{decided: (record: object) => void}} o.web - the dock's last decision.
   * @param {(event: string, payload: object) => void} o.emit - a Cordis event, contained.
   * @param {{warn: (...args: unknown[]) => void}} o.logger
   * @param {import('./health.js').HealthStore} o.health
   * @param {AbortSignal} o.signal - the plugin's lifetime.
   */
  constructor({ ctx, engine, step, report, web, emit, logger, health, signal }) {
    this.ctx = ctx;
    this.engine = engine;
    this.step = step;
    this.report = report;
    this.web = web;
    this.emit = emit;
    this.logger = logger;
    this.health = health;
    this.signal = signal;
    /** @type {Map<string, AbortController>} agent id -> its sleeping wait's cut (effect wait-cut) */
    this.cuts = new Map();
    /** @type {Set<Promise<void>>} */
    this.probes = new Set();
    /** @type {{clear: () => void, unref: () => any} | undefined} */
    this.wake = undefined;
    /** @type {NodeJS.Timeout | undefined} */
    this.save = undefined;
    this.dirty = false; // health changed since the last save was started
    /** @type {{sync: () => void} | undefined} SharedHealth, once Redis is up */
    this.shared = undefined;
  }

  /** @param {string} agent */
  cutWait(agent) {
    this.cuts.get(agent)?.abort(new Error('a channel is usable again'));
  }

  /** @param {number} atMs */
  scheduleWake(atMs) {
    this.wake?.clear();
    this.wake = undefined;
    if (atMs > 0 && !this.signal.aborted) {
      // later() waits out any delay in slices Node accepts: a wake years
      // away (a restored record, a provider's Retry-After) must not spin.
      const wake = later(() => { this.wake = undefined; this.step(wakeEvent()); }, atMs - clockNow());
      wake.unref(); // a pending probe time never keeps a finished host alive
      this.wake = wake;
    }
  }

  /** @param {Channel} channel */
  probe(channel) {
    if (this.signal.aborted) return; // disposed: no request leaves after `stop`
    const started = Date.now();
    const llm = this.ctx.get('llm');
    /** @param {any} ev */
    const settle = (ev) => {
      if (this.signal.aborted) return;
      ev = this.engine.redactEvent(ev); // the provider's words go on in the plugin's events: redacted first
      const record = { type: 'probe-result', channel: channelId(channel), ok: ev.ok, code: ev.failure?.code, ms: Date.now() - started };
      this.report(record);
      this.web.decided(record);
      const probed = { channel, ok: ev.ok, code: ev.failure?.code, message: ev.failure?.message, ms: Date.now() - started };
      this.emit(EVENTS.probe, probed);
      emitCompat(this.ctx, EVENTS.probe, probed, this.logger);
      this.step(ev);
    };
    if (!llm) {
      settle(probeResultEvent(channel, { code: 'ABORTED', message: 'no llm service to probe with' }));
      return;
    }
    const running = runProbe(llm, channel, this.signal, this.engine.resolved?.probeMaxTokens).then(settle);
    this.probes.add(running);
    running.finally(() => this.probes.delete(running));
  }

  healthChanged() {
    this.dirty = true;
    if (this.signal.aborted) return; // the disposer saves once, last
    this.save ??= setTimeout(() => { this.save = undefined; this.dirty = false; this.health.save(); this.shared?.sync(); }, SAVE_DEBOUNCE_MS);
  }

  /** Ends the timers and waits for the probes in flight (they see the aborted signal). */
  async dispose() {
    this.wake?.clear();
    clearTimeout(this.save);
    this.save = undefined;
    await Promise.allSettled([...this.probes]);
  }
}
