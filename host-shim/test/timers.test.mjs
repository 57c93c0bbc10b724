import { test } from 'node:test';
import assert from 'node:assert/strict';
import { later, MAX_TIMER_MS } from '../timers.js';

/** Runs fn with setTimeout replaced by a fake that advances a fake clock. */
function withFakeTimers(fn) {
  const real = globalThis.setTimeout;
  const delays = [];
  let clock = 0;
  const pending = [];
  globalThis.setTimeout = (cb, ms) => {
    delays.push(ms);
    pending.push(() => { clock += ms; cb(); });
    return { unref() {} };
  };
  try {
    fn(() => clock);
    while (pending.length && delays.length < 1000) pending.shift()();
  } finally {
    globalThis.setTimeout = real;
  }
  return delays;
}

test('a delay beyond 2^31-1 ms waits in slices Node accepts, then fires once', () => {
  let firedAt;
  const delay = 2 ** 40; // ~35 years: a restored record, a huge Retry-After
  let now;
  const delays = withFakeTimers((clock) => {
    now = clock;
    later(() => { firedAt = clock(); }, delay, { now: clock });
  });
  assert.ok(delays.every((d) => d >= 0 && d <= MAX_TIMER_MS), `every slice within the cap: ${delays}`);
  assert.equal(delays.length, Math.ceil(delay / MAX_TIMER_MS));
  assert.equal(firedAt, delay, 'fires when the whole delay is over, not before');
  assert.ok(now);
});

test('an ordinary delay fires once; Infinity never fires and NaN fires at once, without warnings', async () => {
  const warnings = [];
  const onWarning = (w) => warnings.push(w.name);
  process.on('warning', onWarning);
  let fired = 0;
  later(() => { fired++; }, 5);
  const never = later(() => { fired += 100; }, Infinity);
  later(() => { fired += 10; }, NaN);
  await new Promise((r) => setTimeout(r, 40));
  never.clear();
  process.off('warning', onWarning);
  assert.equal(fired, 11);
  assert.deepEqual(warnings, []);
});
