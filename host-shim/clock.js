// The module's clock. Every time handed to the policy module (decide,
// restore, every bring-up, and the timers and tables that compare with its times)
// comes from `now`: the wall time when the process started plus the
// monotonic time since. A wall clock stepped inside a running process (an NTP
// correction, a VM resumed) does not move it, so open times, cooldowns, waits
// and burst windows, which the module keeps as differences of its `now`,
// keep their length: measured with Date.now(), a 10-minute step back made one
// host send 191 requests to a dead primary in 20 s (5 without the step).
//
// It starts equal to the wall clock, which is what the module's few
// wall-meaning inputs need: a provider's "resets at 2030-01-01 05:00 UTC" is
// read against it (policy/reset.go), and so are health and quota records
// from other processes. After a step it is off by the step for the rest of
// the process: a stated reset then ends early or late by that much, and the
// channel's next failure (with the same stated time) opens it again;
// merges between hosts do not depend on it (policy/merge.go).
//
// DSH_RESILIENCE_TEST_CLOCK_OFFSET_MS shifts it, for tests of hosts whose
// clocks disagree (e2e/clock-skew.test.mjs); at most a day either way, and
// ignored unless it is a whole number.
import { performance } from 'node:perf_hooks';

const MAX_TEST_OFFSET_MS = 24 * 3600 * 1000;

export function testOffset(raw = process.env.DSH_RESILIENCE_TEST_CLOCK_OFFSET_MS) {
  const n = Number(raw);
  return raw !== undefined && raw !== '' && Number.isInteger(n) && Math.abs(n) <= MAX_TEST_OFFSET_MS ? n : 0;
}

const offset = testOffset();

/** The module's now, in ms: the process's start wall time plus monotonic time since. */
export function now() {
  return Math.floor(performance.timeOrigin + performance.now()) + offset;
}
