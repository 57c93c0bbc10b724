// @ts-check
// The agent's model requests, adapted to engine steps: `agent/request` (the
// route the request goes out on) and `agent/request-error` (what happens to a
// failed one). Both talk only to the engine; waits, spills and hand-backs
// are carried out here, where the host's `next()` is.
//
// Listener order (docs, "How it composes with dsh-llm-retry"): both
// waterfall listeners are prepended, so they run outermost. On a failed
// request the module is asked first (before-host): a spent quota or a channel
// already known down is failed over at once, without waiting out the host's
// retry budget; anything else is deferred to `next()`, and the module is asked
// again only if the host's retry plugin declined it.
import { contextTokensOf, requestErrorEvent, requestEvent } from './events.js';
import { hostFailure } from './host-llm.js';
import { appendRetry, appendRetryStarted } from './retry-events.js';

/** @import { Events } from '@deepseek-ai/cordis' */
/** @import { LlmCallConfig } from '@deepseek-ai/dsh-llm' */
/** @import { RequestErrorAction } from '@deepseek-ai/dsh-agent' */
/** @import { EffectRetry, EffectSpill, Failure } from './policy-types.js' */
/** @import { ReasoningEffortId } from '@deepseek-ai/dsh-llm' */

/** What the host hands an `agent/request` listener. @typedef {Parameters<Events['agent/request']>[0]} RequestPayload */
/** What the host hands an `agent/request-error` listener. @typedef {Parameters<Events['agent/request-error']>[0]} RequestErrorPayload */

const randomDraw = () => Math.floor(Math.random() * 2 ** 53);
const DISABLED = Symbol('quota wait disabled');

/**
 * @param {object} o
 * @param {import("@deepseek-ai/cordis").Context} o.ctx - the host's token meter (a request's context size).
 * @param {import('./engine.js').Engine} o.engine
 * @param {() => Promise<boolean>} o.whenUp - resolves once the engine can
 *   answer (false: it failed to come up, and the request goes as the host sent it).
 * @param {(payload: any, proposed: any) => Promise<boolean>} o.sendCold - whether a
 *   request before the engine is up goes as proposed now (cold-start.js).
 * @param {import('./quota.js').QuotaRules} o.quota
 * @param {{requested: (agent: {id?: unknown} | undefined) => void}} o.web
 * @param {import('./turns.js').Turns} o.turns
 * @param {import('./wait.js').Waits} o.waits
 * @param {Map<string, AbortController>} o.cuts - agent id -> its sleeping wait's cut (effect wait-cut).
 * @param {() => Promise<unknown>} [o.secretsHeld] - settles once the module holds the
 *   credentials' values (redaction.js); never rejects.
 */
export function requestListeners({ ctx, engine, whenUp, sendCold, quota, web, turns, waits, cuts, secretsHeld = async () => {} }) {
  /** @param {unknown} e @param {string} what */
  const fail = (e, what) => engine.fail(e, what);
  /** @param {{code: string, message: string}} f */
  const redactFailure = (f) => engine.redactFailure(f);

  /**
   * The route of one request: the module's swap, or the host's own.
   * @param {RequestPayload} payload
   * @param {() => Promise<LlmCallConfig>} next
   * @returns {Promise<LlmCallConfig>}
   */
  async function onRequest(payload, next) {
    const proposed = await next();
    // The turn is protected from its first request: a module still coming up
    // is awaited, unless the request may go cold (cold-start.js).
    if (!engine.up) {
      if (await sendCold(payload, proposed)) {
        web.requested(payload.agent);
        return proposed;
      }
      if (!(await whenUp())) return proposed;
    }
    quota.track(payload.agent); // its session's settings (quota, pool, home, pick) reach the module first
    const verdict = engine.step(requestEvent(payload, proposed, contextTokensOf(ctx, payload.agent)))?.verdict;
    if (verdict?.kind !== 'swap') {
      web.requested(payload.agent);
      return proposed;
    }
    const swapped = { ...proposed, provider: verdict.provider, model: verdict.model };
    if (verdict.dropReasoningEffort) delete swapped.reasoningEffort;
    if (verdict.reasoningEffort) swapped.reasoningEffort = /** @type {ReasoningEffortId} */ (verdict.reasoningEffort); // a pool route's own
    web.requested(payload.agent);
    return swapped;
  }

  /**
   * A failed request: retried, waited on, failed over, or handed to the host.
   * @param {RequestErrorPayload} payload
   * @param {() => Promise<RequestErrorAction>} next
   * @returns {Promise<RequestErrorAction>}
   */
  async function onRequestError(payload, next) {
    turns.note(payload); // failover and give-up records say where in the task (turns.js)
    // A request sent cold fails before the bring-up: the engine is brought up for it.
    if (!engine.up && !(await whenUp().catch(() => false))) return next();
    await secretsHeld(); // the module redacts this failure's text by the credentials' values: handed over first
    if (quota.active) quota.noteFailure(payload);
    let out = engine.step(requestErrorEvent(payload, 'before-host', randomDraw()));
    if (out === undefined) return next();
    let downstream;
    let asked = false; // next() already answered (after-host)
    if (out.verdict.kind === 'defer') {
      downstream = await next();
      asked = true;
      if (downstream !== undefined || payload.signal?.aborted) return downstream;
      out = engine.step(requestErrorEvent(payload, 'after-host', randomDraw()));
      if (out === undefined || out.verdict.kind === 'delegate' || out.verdict.kind === 'defer') return downstream;
    }
    const verdict = out.verdict;
    switch (verdict.kind) {
      case 'retry': {
        const spill = out.effects.find((fx) => fx.kind === 'spill');
        if (spill) spillRow(payload, spill);
        return { kind: 'retry' };
      }
      case 'wait': {
        // A long-term quota wait (the module says so: held) can also be ended
        // by the session's switch: the failure then goes back to the host.
        const r = await waitThenRetry(payload, verdict.delayMs, out.effects.find((fx) => fx.kind === 'retry'), verdict.held === true);
        if (r === DISABLED) return asked ? downstream : next();
        return r;
      }
      case 'delegate':
        return verdict.original ? handBack(verdict.original, next) : next();
      default:
        fail(new Error(`unexpected verdict "${verdict.kind}"`), 'request-error');
        return next();
    }
  }

  /**
   * Ends the turn with the failure that made the agent leave its channel,
   * not the one in hand (a failover target the host could not serve): thrown
   * as the host's LlmError, which the loop reports as it is.
   * @param {Failure} original
   * @param {() => Promise<RequestErrorAction>} next
   */
  async function handBack(original, next) {
    const error = await hostFailure(original).catch(() => undefined);
    if (!error) return next(); // no host LlmError to carry it: the failure in hand goes back
    throw error;
  }

  /**
   * A spill is a retry without a wait: the session shows it as the stock
   * dsh-llm-retry row would, `llm/retry` (on the channel it goes to) and
   * `llm/retry-started` at once.
   * @param {RequestErrorPayload} payload
   * @param {EffectSpill} spill
   */
  function spillRow(payload, spill) {
    try {
      const retryId = appendRetry(payload, { channel: spill.to, attempt: spill.failures }, 0, redactFailure);
      appendRetryStarted(payload, retryId, spill.failures);
    } catch (e) {
      fail(e, 'llm/retry append (spill)');
    }
  }

  /**
   * Holds the turn for delayMs, then retries; cut short when a channel it may
   * use is usable again (wait-cut), or ended by the turn, the plugin, or (a
   * held quota wait) the session's switch.
   * @param {RequestErrorPayload} payload
   * @param {number} delayMs
   * @param {EffectRetry | undefined} effect - the retry effect the wait is for
   * @param {boolean} held - a long-term quota wait
   * @returns {Promise<RequestErrorAction | typeof DISABLED>}
   */
  async function waitThenRetry(payload, delayMs, effect, held) {
    /** @type {import('@deepseek-ai/dsh-llm-retry').RetryId | undefined} */
    let retryId;
    try {
      retryId = appendRetry(payload, effect, delayMs, redactFailure);
    } catch (e) {
      fail(e, 'llm/retry append');
    }
    const agentId = String(payload.agent?.id ?? 'unknown');
    const hold = held ? quota.hold(agentId) : undefined;
    const cut = new AbortController();
    cuts.set(agentId, cut);
    const signal = AbortSignal.any(/** @type {AbortSignal[]} */ ([payload.signal, hold?.signal, cut.signal].filter(Boolean)));
    const slept = await waits.sleep(delayMs, signal);
    if (cuts.get(agentId) === cut) cuts.delete(agentId);
    if (hold) quota.releaseHold(agentId, hold);
    const wasCut = !slept && cut.signal.aborted && !payload.signal?.aborted && !hold?.signal.aborted && !waits.lifetime.signal.aborted;
    if (!slept && !wasCut) return hold?.signal.aborted && !payload.signal?.aborted ? DISABLED : undefined; // cancelled: the host ends the turn
    try {
      if (retryId) appendRetryStarted(payload, retryId, effect?.attempt ?? 1);
    } catch (e) {
      fail(e, 'llm/retry-started append');
    }
    return { kind: 'retry' };
  }

  return { onRequest, onRequestError };
}
