// @ts-check
// The stall watchdog on `llm/stream` (docs/decisions.md "Stalled streams"). A provider
// that accepts a streaming call and then says nothing holds the task for the
// adapter's own idle timeout (300 s per attempt). This listener measures the
// silence of every streaming call and, when the policy says it is a stall,
// stops reading, closes the connection, and ends the call with an error
// finish (TIMEOUT) that agent/request-error and dsh-llm-retry treat like any
// other timeout.
//
// The policy decides (what counts as a stall, which limit applies: policy/stall.go);
// this file owns the clocks, the one timer per call, and the iterators (its
// event is built in events.js, streamCheckEvent).
//
// Why the call is sent again rather than read through next(): requests
// arrive deep-frozen with the caller's signal, so next() runs the adapter on
// a signal this plugin cannot abort, and return() on its iterator waits
// behind the pending read (async-generator semantics) until the adapter's own
// timeout: the socket would stay open for 300 s. The listener therefore
// dispatches a copy through ctx.llm.stream() with its own signal fused in,
// passes that copy through when it comes round the waterfall again, and
// aborts the signal at a cut. Why the call ends with a finish chunk rather
// than a throw: a throw from a listener bypasses agent/request-error and the
// host's retries (measured in the real host: docs/decisions.md, "Stalled streams").

import { now as clockNow } from './clock.js';
import { afterHostLlm, hostLlmNow, isAgentLoopRequest } from './host-llm.js';
import { hedgeResultEvent, streamCheckEvent } from './events.js';

import { laterTimers } from './timers.js';

/** @import { EventHedgeResult, EventStreamCheck, Verdict, VerdictCut, VerdictWatch } from './policy-types.js' */
/** @import { GenerateOptions, StreamChunk } from '@deepseek-ai/dsh-llm' */

/**
 * A timer handle as StallWatcher's `timers` give it (timers.js `later`): it
 * may be unref'd.
 * @typedef {{unref?: () => unknown}} TimerHandle
 */

/**
 * One watched model call. Its times are on the monotonic clock, but
 * `askedAt`, the wall time it was last asked about.
 * @typedef {object} Call
 * @property {number} openedAt
 * @property {number} chunks - chunks read so far
 * @property {number} lastChunkAt
 * @property {number | undefined} firstTokenMs - set for the check at the first chunk only
 * @property {number} askedAt
 * @property {TimerHandle | undefined} timer - the wake the module asked for
 * @property {boolean} reading - a read of the stream is pending
 * @property {boolean} due - a wake came while the consumer held a chunk
 * @property {boolean} stopped - no longer watched
 * @property {VerdictCut | undefined} cut - the module's cut, once it cut
 * @property {(value: typeof CUT) => void} fire - settles `cutting`
 * @property {Promise<typeof CUT>} [cutting] - settles with CUT when the call is cut
 * @property {GenerateOptions} options - the request its checks name: the hedge's once it won
 * @property {boolean} hedged - a hedge was sent (it is never hedged again)
 * @property {Race | undefined} race - the hedge racing it, until one streams
 * @property {(value: typeof KICK) => void} kick - settles `kicked`: a hedge was sent
 * @property {Promise<typeof KICK>} [kicked]
 */

/**
 * A hedge in flight (policy/hedge.go): the same request sent to another
 * target, raced against the call until one of them streams.
 * @typedef {object} Race
 * @property {GenerateOptions} options - the hedge's request
 * @property {AbortController} own - aborts the hedge's request
 * @property {AsyncIterator<StreamChunk>} it
 * @property {number} openedAt - monotonic
 * @property {Promise<IteratorResult<StreamChunk>>} next - its pending read
 */

const CUT = Symbol('cut');
const KICK = Symbol('hedge sent');
const noop = () => {};

/**
 * The terminal chunk of a cut call: an error finish, as the adapters end a failed call.
 * @param {VerdictCut} verdict
 */
function cutChunk(verdict) {
  const failure = Object.freeze({ code: verdict.code, message: verdict.message });
  return Object.freeze({ type: 'finish', reason: Object.freeze({ kind: 'error', failure }) });
}

/**
 * Ends an abandoned iterator without waiting: a queued return() must never block us.
 * @param {AsyncIterator<unknown>} it
 */
function release(it) {
  try {
    it.return?.()?.catch?.(noop);
  } catch {
    // an iterator whose return() throws has nothing left to release
  }
}

export class StallWatcher {
  /**
   * @param {object} o
   * @param {(event: EventStreamCheck | EventHedgeResult) => Verdict|undefined} o.decide - one policy step
   *   at the wall clock's now, effects carried out; undefined when the module
   *   failed (then the call is left alone: never cut without a decision).
   * @param {() => {stream: Function}|undefined} o.llm - the host's llm
   *   service; without one a call is not watched (its socket could not be closed).
   * @param {(from: GenerateOptions, to: GenerateOptions) => void} [o.carryMarks] - carries the
   *   agent loop's mark from the request to the copy.
   * @param {() => number} [o.wall] - the clock the policy runs on (clock.js, as index.js's
   *   decide): on Date.now() a wall step back of 10 min made every call look 10 min silent,
   *   and each was cut as a stall (measured: 5 false trips of a healthy primary).
   * @param {() => number} [o.mono] - a monotonic clock, for silences.
   * @param {{set: (fn: () => void, ms: number) => TimerHandle | undefined, clear: (h: TimerHandle | undefined) => void}} [o.timers] - set and clear a
   *   timer (timers.js: clamped, so any wake time is safe).
   * @param {() => Promise<unknown> | undefined} [o.upLater] - while the policy is
   *   not up yet (a cold start: cold-start.js), a promise that settles once it
   *   is: a call opened before then is watched from then, on its own clocks.
   */
  constructor({ decide, llm, carryMarks = noop, wall = clockNow, mono = () => performance.now(),
    timers = laterTimers, upLater = () => undefined }) {
    this.decide = decide;
    this.upLater = upLater;
    this.llm = llm;
    this.carryMarks = carryMarks;
    this.wall = wall;
    this.mono = mono;
    this.timers = timers;
    /** @type {WeakSet<object>} requests this watcher sent: pass them through */
    this.copies = new WeakSet();
    /** @type {Set<Call>} calls under watch, for dispose */
    this.calls = new Set();
    this.disposed = false;
  }

  /**
   * The `llm/stream` listener: synchronous, returns the stream to read.
   * @param {GenerateOptions} options
   * @param {() => AsyncIterable<StreamChunk>} next
   * @returns {AsyncIterable<StreamChunk>}
   */
  wrap(options, next) {
    if (this.disposed || this.copies.has(options)) return next();
    const llm = this.llm();
    if (typeof llm?.stream !== 'function') return next();
    /** @type {Call} */
    const call = { openedAt: this.mono(), chunks: 0, lastChunkAt: 0, firstTokenMs: undefined, askedAt: 0, timer: undefined,
      reading: false, due: false, stopped: false, cut: undefined, fire: noop, options, hedged: false, race: undefined, kick: noop };
    call.cutting = new Promise((resolve) => { call.fire = resolve; });
    call.kicked = new Promise((resolve) => { call.kick = resolve; });
    let verdict = this.ask(call, options);
    const later = verdict === undefined ? this.upLater() : undefined;
    if (later) { // the module is coming up: watched from then, its bounds counted from the call's opening
      verdict = { kind: 'watch' };
      later.then(() => this.check(call, options), noop);
    }
    if (verdict?.kind !== 'watch') return next(); // no bound applies, or the module failed
    const own = new AbortController();
    const copy = { ...options, signal: options.signal ? AbortSignal.any([options.signal, own.signal]) : own.signal };
    this.carryMarks(options, copy);
    if (Object.isFrozen(options)) Object.freeze(copy); // its members are the original's, already frozen
    this.copies.add(copy);
    return this.watched(call, options, () => llm.stream(copy), own, verdict);
  }

  /**
   * The watched stream: the call's chunks until it ends, or the cut's chunk.
   * @param {Call} call
   * @param {GenerateOptions} options
   * @param {() => AsyncIterable<StreamChunk>} open - sends the copy
   * @param {AbortController} own - aborts the copy's request
   * @param {Verdict | undefined} verdict - the first answer: watch
   * @returns {AsyncGenerator<StreamChunk>}
   */
  async *watched(call, options, open, own, verdict) {
    const onAbort = () => this.stop(call); // the caller's cancel: the adapter ends the call itself
    options.signal?.addEventListener('abort', onAbort, { once: true });
    this.calls.add(call);
    /** @type {AsyncIterator<StreamChunk> | undefined} */
    let it;
    let ended = false;
    /** @type {Promise<IteratorResult<StreamChunk>> | undefined} a read carried over a hedge's start */
    let carried;
    let current = own; // aborts the request being read: the hedge's once it won
    try {
      it = open()[Symbol.asyncIterator]();
      this.follow(call, options, verdict);
      while (true) {
        const pending = carried ?? it.next();
        carried = undefined;
        call.reading = true;
        if (call.due) {
          call.due = false;
          this.check(call, options);
        }
        /** @type {Promise<any>[]} */
        const racing = [pending, /** @type {Promise<typeof CUT>} */ (call.cutting)]; // set with the call
        const race = call.race;
        if (race) racing.push(race.next.then((r) => ({ hedge: r }), (e) => ({ hedge: undefined, error: e })));
        else if (call.chunks === 0 && !call.hedged) racing.push(/** @type {Promise<typeof KICK>} */ (call.kicked));
        let step = await Promise.race(racing);
        call.reading = false;
        if (step === KICK) { // a hedge was sent: race it against the read in flight
          carried = pending;
          continue;
        }
        if (step === CUT) {
          ended = true;
          pending.catch(noop);
          const cut = /** @type {VerdictCut} */ (call.cut); // set before CUT is fired
          current.abort(new Error(cut.message)); // the adapter's fetch aborts: the connection closes
          release(it);
          if (race) this.endRace(call, 'none', undefined, 'cut');
          yield cutChunk(cut);
          return;
        }
        if (race && 'hedge' in step) {
          const r = /** @type {IteratorResult<StreamChunk> | undefined} */ (step.hedge);
          if (!r || r.done || r.value?.type === 'finish') { // the hedge ended without a chunk: the call goes on alone
            const failure = /** @type {any} */ (r?.value)?.reason?.failure;
            this.endRace(call, 'none', undefined, options.signal?.aborted ? 'cancelled' : 'hedge-failed', failure?.code);
            carried = pending;
            continue;
          }
          // The hedge streamed first: the call is dropped at once, and nothing of it reaches the caller.
          pending.catch(noop);
          own.abort(new Error('dsh-resilience: the hedge answered first'));
          release(it);
          it = race.it;
          current = race.own;
          call.options = race.options;
          this.endRace(call, 'hedge', this.mono() - race.openedAt);
          step = r;
        } else if (race) {
          const r = /** @type {IteratorResult<StreamChunk>} */ (step);
          if (r.done || r.value?.type === 'finish') { // no chunk: its ending reaches the host as without a hedge
            this.endRace(call, 'none', undefined, options.signal?.aborted ? 'cancelled' : 'primary-ended');
          } else {
            this.endRace(call, 'primary', this.mono() - call.openedAt);
          }
        }
        if (step.done) {
          ended = true;
          return;
        }
        if (++call.chunks === 1) {
          call.lastChunkAt = this.mono();
          // A hedged call's first token went in its hedge-result: one sample per call.
          if (!call.hedged) call.firstTokenMs = call.lastChunkAt - call.openedAt;
          this.check(call, call.options); // the idle bound takes over from the first-chunk bound
          call.firstTokenMs = undefined; // one sample per call
        }
        yield step.value;
        call.lastChunkAt = this.mono(); // waiting again: a slow consumer is not the provider's silence
      }
    } finally {
      this.stop(call);
      this.calls.delete(call);
      options.signal?.removeEventListener('abort', onAbort);
      if (call.race) this.endRace(call, 'none', undefined, 'cancelled'); // the consumer stopped early
      // The consumer stopped early, or downstream threw: no read is pending, so return() is prompt.
      if (!ended && it) await it.return?.();
    }
  }

  /**
   * Sends the module's hedge of a call: the same request to another target,
   * under a signal of its own (as the call's copy), raced by `watched`.
   * @param {Call} call
   * @param {NonNullable<VerdictWatch['hedge']>} h
   */
  sendHedge(call, h) {
    const llm = this.llm();
    if (call.hedged || call.chunks > 0 || typeof llm?.stream !== 'function') return;
    const from = call.options;
    const own = new AbortController();
    /** @type {GenerateOptions} */
    const options = { ...from, provider: h.provider, model: h.model,
      signal: from.signal ? AbortSignal.any([from.signal, own.signal]) : own.signal };
    if (h.dropReasoningEffort) delete options.reasoningEffort;
    if (h.reasoningEffort) options.reasoningEffort = /** @type {any} */ (h.reasoningEffort);
    this.carryMarks(from, options);
    if (Object.isFrozen(from)) Object.freeze(options);
    this.copies.add(options);
    call.hedged = true;
    try {
      const it = llm.stream(options)[Symbol.asyncIterator]();
      const next = it.next();
      next.catch(noop);
      call.race = { options, own, it, openedAt: this.mono(), next };
    } catch (e) {
      call.race = { options, own, it: /** @type {any} */ ({}), openedAt: this.mono(), next: Promise.reject(e) };
      call.race.next.catch(noop);
    }
    call.kick(KICK);
  }

  /**
   * Ends a call's race: the loser aborted (the winner's stream goes on), and
   * the module told who won.
   * @param {Call} call
   * @param {'primary' | 'hedge' | 'none'} winner
   * @param {number | undefined} firstTokenMs - the winner's, from its own start
   * @param {string} [end] - with none: why
   * @param {string} [code] - the hedge's failure, with hedge-failed
   */
  endRace(call, winner, firstTokenMs, end, code) {
    const race = call.race;
    if (!race) return;
    call.race = undefined;
    if (winner !== 'hedge') {
      race.own.abort(new Error('dsh-resilience: the hedge lost'));
      race.next.catch(noop);
      release(race.it);
    }
    try {
      this.decide(hedgeResultEvent(call, call.options, winner, firstTokenMs, end, code, this.wall(), this.mono()));
    } catch {
      // the race is over whatever the module says
    }
  }

  /**
   * Asks the policy about a call; undefined (leave the call alone) if anything throws.
   * @param {Call} call
   * @param {GenerateOptions} options
   */
  ask(call, options) {
    try {
      const wall = this.wall();
      call.askedAt = wall;
      return this.decide(streamCheckEvent(call, call.options ?? options, wall, this.mono()));
    } catch {
      return undefined; // a throw here would fail the caller's turn, or crash the host from a timer
    }
  }

  /**
   * @param {Call} call
   * @param {GenerateOptions} options
   */
  check(call, options) {
    if (call.stopped) return;
    const v = this.ask(call, options);
    const later = v === undefined ? this.upLater() : undefined;
    if (!later) {
      this.follow(call, options, v);
      return;
    }
    // The module is still coming up (a request sent cold whose first chunk
    // came first): asked again once it is, the first token's sample kept.
    // Followed on no answer, the call went unwatched, and a stream that went
    // silent after its first chunk waited out the adapter's own 300 s.
    // Asked once more then, whatever it answers (no answer: the bring-up failed).
    const sample = call.firstTokenMs;
    later.then(() => {
      if (call.stopped) return;
      call.firstTokenMs ??= sample;
      this.follow(call, options, this.ask(call, options));
      call.firstTokenMs = undefined;
    }, noop);
  }

  /**
   * Carries out a verdict on a watched call.
   * @param {Call} call
   * @param {GenerateOptions} options
   * @param {Verdict | undefined} v
   */
  follow(call, options, v) {
    this.timers.clear(call.timer);
    call.timer = undefined;
    if (call.stopped) return;
    switch (v?.kind) {
      case 'watch':
        if (v.hedge) this.sendHedge(call, v.hedge);
        if (v.atMs != null) { // the module leaves it out, never null: one test for both
          call.timer = this.timers.set(() => this.wake(call, options), Math.max(0, v.atMs - call.askedAt));
          call.timer?.unref?.(); // never what keeps a process alive
        }
        return;
      case 'cut':
        call.cut = v;
        this.stop(call);
        call.fire(CUT);
        return;
      default: // pass (no bound applies any more), or the module failed
        this.stop(call);
    }
  }

  /**
   * @param {Call} call
   * @param {GenerateOptions} options
   */
  wake(call, options) {
    call.timer = undefined;
    if (call.stopped) return;
    if (!call.reading) {
      call.due = true; // the consumer holds a chunk: ask once it waits again
      return;
    }
    this.check(call, options);
  }

  /** @param {Call} call */
  stop(call) {
    call.stopped = true;
    this.timers.clear(call.timer);
    call.timer = undefined;
  }

  /** Stops every timer; calls in flight go on, unwatched. */
  dispose() {
    this.disposed = true;
    for (const call of this.calls) this.stop(call);
    this.calls.clear();
  }
}

/**
 * Registers the watchdog in the host.
 * @param {import('./host.js').Context} ctx - the plugin's Cordis context.
 * @param {(event: EventStreamCheck | EventHedgeResult) => Verdict|undefined} decide - index.js's policy step.
 * @param {() => Promise<unknown> | undefined} [upLater] - StallWatcher's.
 */
export function watchStalls(ctx, decide, upLater = () => undefined) {
  // The agent loop marks its requests; listeners behind this one must see the copy marked too.
  /** @param {GenerateOptions} from @param {GenerateOptions} to */
  const carryMarks = (from, to) => {
    if (isAgentLoopRequest(from)) hostLlmNow()?.markAgentLoopRequest(to); // marked: the package is loaded
  };
  const watcher = new StallWatcher({ decide, llm: () => ctx.get('llm'), carryMarks, upLater });
  ctx.on('llm/stream', afterHostLlm((options, next) => watcher.wrap(options, next)), true);
  ctx.effect(() => () => watcher.dispose(), 'dsh-resilience: stop watching model streams');
  return watcher;
}
