// @ts-check
// The Cordis events this plugin emits, by name: announced by the events
// subscriber (effect-events.js) and the probe's settle (shell.js), mapped to
// dsh-model-failover's names (compat-events.js). A file of their own, so
// none of those imports another to learn a name.

/** Cordis events this plugin emits, with the effect that causes each. */
export const EVENTS = /** @type {const} */ ({
  circuitOpened: 'dsh-resilience/circuit-opened',
  circuitClosed: 'dsh-resilience/circuit-closed',
  failover: 'dsh-resilience/failover',
  giveUp: 'dsh-resilience/give-up',
  spill: 'dsh-resilience/spill',
  probe: 'dsh-resilience/probe', // announced with its outcome, when the probe settles (shell.js)
  stall: 'dsh-resilience/stall',
  slow: 'dsh-resilience/slow',
  hedge: 'dsh-resilience/hedge',
  toolRetry: 'dsh-resilience/tool-retry',
});
