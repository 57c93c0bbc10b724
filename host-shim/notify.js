// @ts-check
// Webhook notifications (`notify`): a few audit records an operator wants to
// be woken for, POSTed as JSON to the URLs the config names. The module
// decides (policy/notify.go): which records mean which event, the body's
// fields, the rate limit (one per event and channel a minute), and which
// targets chose the event; it checks the `notify` list with the rest of the
// row (policy/notifytarget.go). It says so on the record's audit entry
// (`notify`, effect-audit.js); the notifier only delivers. Sending is off the
// decision path: a notification is handed over and the request goes on its
// own; a receiver that hangs or refuses costs one `notify-failed` audit
// line, never a request's time.
//
// A headless run stops right after its last record (a give-up ends the turn,
// and the host exits): the tries left then go within the exit's grace, a
// short wait apart, and a delivery that still fails is audited before the
// plugin's `stop` line. Otherwise the one notification an operator most wants
// from a script (it gave up) was the one lost without a trace.
//
// Each POST is signed over a time and a delivery id as well as the body, so a
// receiver can refuse a captured POST sent again: an old time, or an id it
// already took. A retry keeps its delivery id (it is the same notification).
//
// The signing secret is a reference (an environment-style name resolved
// through the host's credentials, as shared.redis.passwordEnv): read when a
// notification is sent (its tries share it), never cached beyond that, never
// logged, never in the audit. The URL is not
// logged either (webhook URLs often carry a token in their path): a failure
// names the target's index and its origin only.
import { createHmac, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

/** @import { Notification, ResolvedNotifyTarget } from './policy-types.js' */

export const SIGNATURE_HEADER = 'x-dsh-resilience-signature';
/** One notification to one target: the same id on each of its tries. */
export const DELIVERY_HEADER = 'x-dsh-resilience-delivery';
/** Tries per notification, and the waits between them (doubling, bounded). */
export const MAX_TRIES = 3;
export const RETRY_BASE_MS = 1_000;
/**
 * How long a stopping host lets sends finish, tries left included: the last
 * turn's notification (a give-up or a "returned" at the end of a headless
 * task) still goes out, and a hanging receiver holds the shutdown no longer
 * than this. The host gives the whole plugin tree 5 s to dispose before it
 * forces the exit; the notifier's grace starts with the plugin's dispose and
 * leaves the rest to the other plugins and the last audit lines.
 */
export const STOP_GRACE_MS = 3_000;
/** Once stopping, the wait before each try left (the backoff's seconds do not fit the grace). */
export const STOP_RETRY_MS = 250;

/**
 * The signature header's value for one try: `t=<unix seconds>,v1=<hex>`, the
 * HMAC-SHA256 under `secret` of `<t>.<delivery>.<body>` (the body's exact
 * bytes). The time and the delivery id are signed so a receiver can refuse a
 * replay (docs/telemetry.md gives its recipe).
 * @param {string} body
 * @param {string} secret
 * @param {number} t - the try's time, in whole seconds since the epoch
 * @param {string} delivery - the delivery id (DELIVERY_HEADER)
 */
export const sign = (body, secret, t, delivery) => `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${delivery}.${body}`).digest('hex')}`;

/**
 * The wait before try `n` (2, 3, ...): doubling from RETRY_BASE_MS.
 * @param {number} n
 */
export const retryDelayMs = (n, base = RETRY_BASE_MS) => base * 2 ** (n - 2);

/**
 * Whether a receiver's HTTP answer is worth another try: not a 3xx (a
 * redirect is not followed: the body and its signature would go where the
 * config does not say) nor any other 4xx.
 * @param {number} status
 */
const retryable = (status) => status === 408 || status === 429 || status >= 500;

/**
 * Sends notifications for the records it is shown.
 */
export class Notifier {
  /**
   * @param {object} o
   * @param {() => readonly ResolvedNotifyTarget[]} o.targets - the module's resolved `notify` list
   * @param {(record: object) => void} o.report - the audit writer (`notify-failed`)
   * @param {(name: string) => Promise<string | undefined>} o.secret - resolves a secretEnv reference
   * @param {typeof fetch} [o.fetch]
   * @param {() => number} [o.now]
   * @param {number} [o.retryBaseMs]
   * @param {number} [o.graceMs] - how long a stopping host lets sends finish
   * @param {number} [o.stopRetryMs] - once stopping, the wait before each try left
   * @param {string} [o.host] - the host name the bodies carry
   */
  constructor({ targets, report, secret, fetch = globalThis.fetch, now = Date.now, retryBaseMs = RETRY_BASE_MS, graceMs = STOP_GRACE_MS, stopRetryMs = STOP_RETRY_MS, host = hostname() }) {
    this.targets = targets;
    this.report = report;
    this.secret = secret;
    this.fetch = fetch;
    this.now = now;
    this.retryBaseMs = retryBaseMs;
    this.host = host;
    this.graceMs = graceMs;
    this.stopRetryMs = stopRetryMs;
    this.closing = new AbortController(); // stopping: the waits between tries are cut short
    this.lifetime = new AbortController(); // the grace is over: no new sends, no more tries, the sends in flight are cut
    /** @type {Set<Promise<void>>} */
    this.inflight = new Set();
  }

  /**
   * The module's notification for an audit record just written (already
   * rate-limited): hands it to each target that chose its event. Never
   * throws, never waits.
   * @param {Notification} n
   * @param {string} type - the record's type
   */
  observe(n, type) {
    if (this.lifetime.signal.aborted) return;
    try {
      // The body as documented (docs/telemetry.md): the module's fields, and what only the shim knows.
      const body = { event: n.event, type, time: new Date(this.now()).toISOString(), ...n.body, host: this.host };
      const targets = this.targets();
      for (const index of n.targets) {
        const sending = this.send(targets[index], index, n.event, body).catch(() => {}); // send() reports its own failures
        this.inflight.add(sending);
        sending.finally(() => this.inflight.delete(sending));
      }
    } catch { /* a notification never costs a record */ }
  }

  /**
   * @param {ResolvedNotifyTarget} target
   * @param {number} index - the target's place in `notify`, for the failure record
   * @param {string} event
   * @param {object} fields - the body but its delivery id
   */
  async send(target, index, event, fields) {
    /** @param {number} tries @param {string} text */
    const failed = (tries, text) => this.report({ type: 'notify-failed', target: index, origin: new URL(target.url).origin, event, tries, reason: text });
    // Read once per notification, for its tries: a stopping host's credential
    // service is gone by the time a retry goes (asking it then throws).
    let secret;
    if (target.secretEnv) {
      secret = await this.secret(target.secretEnv).catch(() => null);
      if (!secret) return failed(0, `secretEnv ${target.secretEnv} ${secret === null ? 'could not be read' : 'is not set'}`);
    }
    const delivery = randomUUID();
    const body = JSON.stringify({ ...fields, delivery });
    /** @type {{retry: boolean, text: string} | undefined} */
    let reason;
    let tries = 0;
    for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
      if (attempt > 1 && !(await this.pause(retryDelayMs(attempt, this.retryBaseMs)))) break; // the grace is over
      tries = attempt;
      reason = await this.post(target, body, delivery, secret);
      if (reason === undefined) return;
      if (!reason.retry) break;
    }
    failed(tries, /** @type {{text: string}} */ (reason).text); // the loop ran at least once
  }

  /**
   * One POST under the target's timeout; undefined when the receiver took it.
   * @param {ResolvedNotifyTarget} target
   * @param {string} body
   * @param {string} delivery - the delivery id, the same on every try
   * @param {string | undefined} secret - the signing secret, when the target names one
   * @returns {Promise<{retry: boolean, text: string} | undefined>}
   */
  async post(target, body, delivery, secret) {
    /** @type {Record<string, string>} */
    const headers = { 'content-type': 'application/json', 'user-agent': 'dsh-resilience', [DELIVERY_HEADER]: delivery };
    if (secret) headers[SIGNATURE_HEADER] = sign(body, secret, Math.floor(this.now() / 1000), delivery);
    const signal = AbortSignal.any([this.lifetime.signal, AbortSignal.timeout(target.timeoutMs)]);
    try {
      // `manual`: a 3xx comes back as the answer it is (with `error` it was a TypeError, and retried).
      const res = await this.fetch(target.url, { method: 'POST', headers, body, signal, redirect: 'manual' });
      await res.body?.cancel().catch(() => {});
      if (res.ok) return undefined;
      return { retry: retryable(res.status), text: `HTTP ${res.status}` };
    } catch (e) {
      const text = e?.name === 'AbortError' ? 'no answer before exit' // only the end of the grace aborts
        : e?.name === 'TimeoutError' ? `no answer within ${target.timeoutMs} ms`
          : String(e?.cause?.code ?? e?.code ?? e?.name ?? 'error').slice(0, 60);
      return { retry: true, text };
    }
  }

  /**
   * Waits `ms`, or `stopRetryMs` once stopping if that ends sooner; false when
   * the grace ends first.
   * @param {number} ms
   * @returns {Promise<boolean>}
   */
  pause(ms) {
    const { closing, lifetime } = this;
    return new Promise((resolve) => {
      if (lifetime.signal.aborted) return resolve(false);
      const end = Date.now() + ms;
      /** @param {boolean} ok */
      const done = (ok) => {
        clearTimeout(timer);
        closing.signal.removeEventListener('abort', hurry);
        lifetime.signal.removeEventListener('abort', cut);
        resolve(ok);
      };
      const wait = (/** @type {number} */ t) => {
        const timer = setTimeout(() => done(true), Math.max(0, t));
        timer.unref?.(); // a pending retry never holds a running host open; a stopping one awaits it
        return timer;
      };
      let timer = wait(closing.signal.aborted ? Math.min(ms, this.stopRetryMs) : ms);
      const hurry = () => {
        if (end - Date.now() <= this.stopRetryMs) return;
        clearTimeout(timer);
        timer = wait(this.stopRetryMs);
      };
      const cut = () => done(false);
      closing.signal.addEventListener('abort', hurry, { once: true });
      lifetime.signal.addEventListener('abort', cut, { once: true });
    });
  }

  /**
   * Stops: each send goes on within `graceMs`, its tries left `stopRetryMs`
   * apart; then what is still under way is cut, and each delivery not taken
   * writes its `notify-failed` line before this resolves, so the plugin's
   * `stop` is still the log's last line. A record seen within the grace is
   * still sent; none after it.
   */
  async dispose() {
    this.closing.abort();
    const timer = setTimeout(() => this.lifetime.abort(), this.graceMs);
    while (this.inflight.size > 0) await Promise.allSettled([...this.inflight]); // a send may begin while others end
    clearTimeout(timer);
    this.lifetime.abort();
  }
}
