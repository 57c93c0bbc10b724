// @ts-check
// Timers that survive any delay. Node's setTimeout takes at most 2^31-1 ms
// (~24.8 days); above that it prints a TimeoutOverflowWarning and fires after
// 1 ms, so a far-future wake (a restored record, a large Retry-After) re-ran
// every millisecond. Every timer the shim sets goes through `later`: it waits
// at most the cap at a time and re-arms until the delay is really over.

export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * A delay made safe for setTimeout: a finite, non-negative number of ms.
 * @param {number} ms
 */
const safe = (ms) => (Number.isFinite(ms) ? Math.max(0, ms) : ms > 0 ? Infinity : 0);

/**
 * A timer from `later`: cleared once, or unref'd so it keeps no process alive.
 * @typedef {{clear: () => void, unref: () => Later}} Later
 */

/**
 * Calls fn once after ms (any size; Infinity never fires).
 * @param {() => void} fn
 * @param {number} ms
 * @param {{now?: () => number}} [o] - the clock the delay is measured on.
 * @returns {Later}
 */
export function later(fn, ms, { now = () => performance.now() } = {}) {
  const due = now() + safe(ms);
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  let unref = false;
  let cleared = false;
  const arm = () => {
    const left = due - now();
    timer = setTimeout(() => {
      if (cleared) return;
      if (due - now() > 0 && left > MAX_TIMER_MS) arm(); // a slice of a long delay
      else fn();
    }, Math.min(Math.max(0, left), MAX_TIMER_MS));
    if (unref) timer.unref?.();
  };
  arm();
  return {
    clear() {
      cleared = true;
      clearTimeout(timer);
    },
    unref() {
      unref = true;
      timer?.unref?.();
      return this;
    },
  };
}

/** `later`, shaped as the setTimeout/clearTimeout pair StallWatcher takes. */
export const laterTimers = {
  /** @param {() => void} fn @param {number} ms */
  set: (fn, ms) => later(fn, ms),
  /** @param {unknown} h - what `set` gave, or undefined */
  clear: (h) => /** @type {Later | undefined} */ (h)?.clear(),
};
