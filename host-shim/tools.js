// @ts-check
// Tool-call retry, the shim's half. The policy decides which tools, which
// failures and how long to wait (policy/toolretry.go); this wraps the host's
// `tools/execute` waterfall, asks after every attempt, and carries the answer
// out. It holds nothing between calls: each call's attempt count lives in its
// own listener invocation.
//
// Why each repeat runs under a deadline of its own: Cordis's waterfall `next`
// shifts listeners off a shared queue, so a second `next()` from this listener
// goes straight to the registry's base dispatch (dsh-host.md §4.3, §8.2),
// past every wrapper the first attempt went through, the host's tool timeout
// policy included. The first attempt is left to those wrappers; every repeat
// gets a deadline fused with the caller's cancellation and the plugin's
// lifetime, swapped onto `exec.signal` (the one field a wrapper may replace)
// and restored afterwards.

import { later } from './timers.js';
import { toolResultEvent } from './events.js';

/** @import { EventToolResult, Verdict } from './policy-types.js' */
/** @import { ToolDispatchExecution, ToolExecutionResult } from '@deepseek-ai/dsh-tools' */

const randomDraw = () => Math.floor(Math.random() * 2 ** 53);

/**
 * A failed result with the policy's note appended to what the model sees, as
 * one more line. Everything else, `isError` and the structured error included,
 * stays the real failure's.
 * @param {ToolExecutionResult} result
 * @param {string} note
 * @returns {ToolExecutionResult}
 */
export function withNote(result, note) {
  const content = Array.isArray(result.content) ? [...result.content] : [];
  const last = content.at(-1);
  if (last?.type === 'text' && typeof last.text === 'string') content[content.length - 1] = { ...last, text: `${last.text}\n${note}` };
  else content.push({ type: 'text', text: note });
  return { ...result, content };
}

/**
 * What a repeat whose own deadline won returns: the shape the host's timeout policy uses.
 * @param {number} ms
 * @returns {ToolExecutionResult}
 */
export function retryDeadlineResult(ms) {
  const message = `tool call timed out after ${ms}ms (dsh-resilience repeat deadline)`;
  return {
    content: [{ type: 'text', text: `Error: ${message}` }],
    isError: true,
    error: { message, info: { name: 'ToolTimeoutError', code: 'TOOL_TIMEOUT' } },
  };
}

/**
 * The `tools/execute` listener (register it prepended: outermost).
 * @param {object} o
 * @param {(event: EventToolResult) => Verdict|undefined} o.decide - one policy step's
 *   verdict; undefined when the module failed, and then the result goes back as it is.
 * @param {{sleep: (ms: number, signal?: AbortSignal) => Promise<boolean>}} o.waits - cancellable waits (wait.js).
 * @param {AbortSignal} o.lifetime - aborts when the plugin is disposed.
 * @param {(name: string, agent: ToolDispatchExecution['agent']) => number|undefined} [o.declaredTimeout] -
 *   the tool's own `timeoutMs`, when it declares one.
 * @param {(error: unknown, what: string) => void} o.fail - reports a broken answer.
 * @param {() => Promise<unknown> | undefined} [o.ready] - while the module is not up (a run
 *   started cold), its bring-up, started: a result is the module's to decide, so it waits for it.
 * @param {() => number} [o.rand]
 * @returns {(exec: ToolDispatchExecution, next: () => Promise<ToolExecutionResult>) => Promise<ToolExecutionResult>}
 */
export function toolRetryListener({ decide, waits, lifetime, declaredTimeout = () => undefined, fail, ready = () => undefined, rand = randomDraw }) {
  return async (exec, next) => {
    const caller = exec.signal; // the caller's cancellation, or an outer wrapper's
    // attempt 1, through every wrapper inside this one. A failure thrown
    // rather than returned is decided the same way (tool-retry users had both
    // repeated); when it is the last word, it is thrown again as it was.
    const bringUp = ready(); // beside the tool's own run
    let { result, thrown } = await settleAttempt(next);
    await bringUp;
    /** @param {ToolExecutionResult} r */
    const give = (r) => {
      if (thrown !== undefined) throw thrown;
      return r;
    };
    for (let attempt = 1; ;) {
      let verdict;
      try {
        verdict = decide(toolResultEvent(exec, result, attempt, rand(), timeoutOf(declaredTimeout, exec)));
      } catch (e) {
        fail(e, 'tool-result');
        return give(result);
      }
      if (verdict === undefined) return give(result); // the module failed: what the host does without us
      if (verdict.kind === 'tool-return') {
        return give(verdict.note && result?.isError === true ? withNote(result, verdict.note) : result);
      }
      if (verdict.kind !== 'tool-retry') {
        fail(new Error(`unexpected verdict "${verdict.kind}"`), 'tool-result');
        return give(result);
      }
      // A cancel, or the plugin going away, during the wait: the failure in hand.
      if (!(await waits.sleep(verdict.delayMs, caller))) return give(result);
      attempt = verdict.attempt;
      ({ result, thrown } = await settleAttempt(() => repeat(exec, next, [caller, lifetime], verdict.deadlineMs)));
    }
  };
}

/**
 * One attempt's outcome: its result, or what it threw and that as a failed result.
 * @param {() => Promise<ToolExecutionResult>} run
 * @returns {Promise<{result: ToolExecutionResult, thrown: unknown}>}
 */
async function settleAttempt(run) {
  try {
    return { result: await run(), thrown: undefined };
  } catch (e) {
    return { result: thrownResult(e), thrown: e ?? new Error('tool call threw nothing') };
  }
}

/**
 * A thrown failure in the shape of a returned one, for the classifier: its message and code.
 * @param {unknown} e - what the tool threw
 * @returns {ToolExecutionResult}
 */
export function thrownResult(e) {
  const thrown = /** @type {{message?: unknown, code?: unknown, name?: unknown} | null | undefined} */ (e); // most often an Error
  const message = String(thrown?.message ?? e ?? 'tool call threw');
  const code = typeof thrown?.code === 'string' && thrown.code ? thrown.code : undefined;
  return {
    isError: true,
    content: [{ type: 'text', text: `Error: ${message}` }],
    error: { message, ...(code ? { info: { name: String(thrown?.name ?? 'Error'), code } } : {}) },
  };
}

/**
 * @param {(name: string, agent: ToolDispatchExecution['agent']) => number | undefined} declaredTimeout
 * @param {ToolDispatchExecution} exec
 */
function timeoutOf(declaredTimeout, exec) {
  try {
    return declaredTimeout(exec.name, exec.agent);
  } catch {
    return undefined;
  }
}

/**
 * One repeat, under its own deadline fused with the given signals.
 * @param {ToolDispatchExecution} exec
 * @param {() => Promise<ToolExecutionResult>} next
 * @param {(AbortSignal | undefined)[]} signals
 * @param {number} deadlineMs
 * @returns {Promise<ToolExecutionResult>}
 */
async function repeat(exec, next, signals, deadlineMs) {
  const caller = exec.signal;
  const deadline = new AbortController();
  const timer = later(() => deadline.abort(new Error(`dsh-resilience: repeat deadline of ${deadlineMs} ms`)), deadlineMs);
  exec.signal = AbortSignal.any([.../** @type {AbortSignal[]} */ (signals.filter(Boolean)), deadline.signal]);
  const timedOut = () => deadline.signal.aborted && !signals.some((s) => s?.aborted);
  try {
    const result = await next();
    // Only a failure is put down to the deadline: a success stays a success.
    return timedOut() && result?.isError === true ? retryDeadlineResult(deadlineMs) : result;
  } catch (e) {
    if (timedOut()) return retryDeadlineResult(deadlineMs); // a tool that throws on abort: our deadline won
    throw e;
  } finally {
    timer.clear();
    exec.signal = caller;
  }
}
