// @ts-check
// The balance scripts' runner: a provider's script runs when the module asks
// (effect refresh-balance), at most one at a time per provider, and its
// reading goes back to the module as an event. When to read again is the
// module's too (effect schedule-refresh): this holds its one timer.
import { wakeEvent } from './events.js';
import { now as clockNow } from './clock.js';

export class Balances {
  /**
   * @param {object} o
   * @param {import('./host.js').Context} o.ctx - the plugin's context (the script runner reaches the host through it).
   * @param {() => import('./policy-types.js').ResolvedConfig} o.resolved - the config the module runs now.
   * @param {(event: object) => unknown} o.decide - one policy step with its effects carried out.
   * @param {(record: object) => unknown} o.report - the audit log.
   * @param {import('./balance.js').ReadOutput} o.read - the module's reading of a script's output.
   * @param {{warn: Function}} [o.logger]
   * @param {AbortSignal} o.lifetime
   */
  constructor({ ctx, resolved, decide, report, read, logger, lifetime }) {
    Object.assign(this, { ctx, resolved, decide, report, read, logger, lifetime });
    /** @type {import('./balance.js').ReadOutput} */
    this.read;
    /** @type {{warn: Function} | undefined} */
    this.logger;
    /** @type {import('./host.js').Context} */
    this.ctx;
    /** @type {() => import('./policy-types.js').ResolvedConfig} */
    this.resolved;
    /** @type {(event: object) => unknown} */
    this.decide;
    /** @type {(record: object) => unknown} */
    this.report;
    /** @type {AbortSignal} */
    this.lifetime;
    /** @type {Map<string, Promise<void>>} provider -> its balance run */
    this.running = new Map();
    /** @type {NodeJS.Timeout | undefined} */
    this.timer = undefined;
  }

  /**
   * Runs a provider's balance script and hands the reading to the module.
   * @param {string} provider
   */
  refresh(provider) {
    const b = this.resolved().quota.balances.find((x) => x.provider === provider);
    if (!b || this.running.has(provider)) return this.running.get(provider);
    const started = Date.now();
    // balance.js is loaded with the first reading, off the start-up path of rows without balances.
    const run = import('./balance.js').then(({ runBalance }) => runBalance(this.ctx, b, this.lifetime, this.read)).then((reading) => {
      this.running.delete(provider);
      if (this.lifetime.aborted) return;
      const { why, warning, ...event } = reading;
      // The contract: a credential nothing is configured for "logs a warning; the script still runs".
      if (warning) this.logger?.warn('dsh-resilience: balance script for %s: %s', provider, warning);
      // The audit line has the number or the reason, never the script's output.
      this.report({ type: 'balance', provider, ok: event.ok, remaining: event.remaining, why, ...(warning ? { warning } : {}), ms: Date.now() - started });
      this.decide(event);
    });
    this.running.set(provider, run);
    return run;
  }

  /**
   * The module's next reading time: one timer, replaced by each effect.
   * @param {number} atMs
   */
  schedule(atMs) {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (atMs > 0 && !this.lifetime.aborted) {
      this.timer = setTimeout(() => { this.timer = undefined; this.decide(wakeEvent()); }, Math.max(0, atMs - clockNow()));
      this.timer.unref?.();
    }
  }

  /** Settles when every script still running has ended. */
  dispose() {
    clearTimeout(this.timer);
    return Promise.allSettled([...this.running.values()]);
  }
}
