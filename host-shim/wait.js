// @ts-check
// Cancellable waits. Every wait ends at once when the turn is aborted or the
// plugin is disposed (hot reload included): nothing dangles past its owner.
import { later } from './timers.js';

export class Waits {
  constructor() {
    this.lifetime = new AbortController();
  }

  /**
   * Resolves true after ms, or false as soon as signal or the plugin's lifetime aborts.
   * @param {number} ms
   * @param {AbortSignal} [signal]
   * @returns {Promise<boolean>}
   */
  sleep(ms, signal) {
    const fused = signal ? AbortSignal.any([signal, this.lifetime.signal]) : this.lifetime.signal;
    if (fused.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = later(() => {
        fused.removeEventListener('abort', onAbort);
        resolve(true);
      }, ms);
      function onAbort() {
        timer.clear();
        resolve(false);
      }
      fused.addEventListener('abort', onAbort, { once: true });
    });
  }

  dispose() {
    this.lifetime.abort(new Error('dsh-resilience disposed'));
  }
}
