// Webhook notifications (notify.js): the body around the module's
// notification (which records mean one, their fields, the rate limit, the
// targets that chose it and the check of the `notify` list are the
// module's: policy/notify.go, plugin/codec/notify_test.go),
// signing (checked with the recipe docs/telemetry.md gives receivers), and
// the sender against a scripted fetch (tries, backoff, the one audit line on
// failure, the tries a stopping host still makes) and against a real
// receiver that redirects.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { auditSubscriber } from '../effect-audit.js';
import { compileModule, ConfigError, Engine } from '../engine.js';
import { DELIVERY_HEADER, Notifier, retryDelayMs, sign, SIGNATURE_HEADER } from '../notify.js';

const URL_OK = 'http://127.0.0.1:9/hook';
const P = { provider: 'deepseek-official', model: 'deepseek-v4-flash' };
const S = { provider: 'mock', model: 'mock-b' };

test('the module checks the notify list with the row: a bad target stops it by key, its URL never quoted back', async () => {
  // The cases, key by key: plugin/codec/notify_test.go TestNotifyConfig.
  const compiled = await compileModule();
  let caught;
  try {
    new Engine(compiled, { notify: [{ url: 'ftp://x/y?token=t-1', events: ['give-up'] }] }, { warn() {} }); // eslint-disable-line no-new
  } catch (e) {
    caught = e;
  }
  assert.ok(caught instanceof ConfigError, String(caught));
  assert.equal(caught.message, 'dsh-resilience: config key "notify[0].url": must be an http:// or https:// URL');
  assert.ok(!caught.message.includes('t-1'), 'the URL is not quoted back');
  const engine = new Engine(compiled, { notify: [{ url: URL_OK, events: ['provider-open', 'returned'], secretEnv: 'HOOK_SECRET' }] }, { warn() {} });
  assert.deepEqual(engine.resolved.notify, [{ url: URL_OK, events: ['provider-open', 'returned'], secretEnv: 'HOOK_SECRET', timeoutMs: 5000 }]);
  assert.deepEqual(new Engine(compiled, {}, { warn() {} }).resolved.notify, []);
});

test('the signature is t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<delivery>.<body>">', () => {
  const body = '{"event":"give-up"}';
  const id = '0b9c3a52-8f5e-4b8e-9d1c-3f1e2a4b5c6d';
  assert.equal(sign(body, 'k', 1_800_000_000, id), `t=1800000000,v1=${createHmac('sha256', 'k').update(`1800000000.${id}.${body}`).digest('hex')}`);
  assert.notEqual(sign(body, 'k', 1_800_000_000, id), sign(`${body} `, 'k', 1_800_000_000, id));
  assert.notEqual(sign(body, 'k', 1_800_000_000, id), sign(body, 'k', 1_800_000_001, id), 'the time is signed');
  assert.notEqual(sign(body, 'k', 1_800_000_000, id), sign(body, 'k', 1_800_000_000, `${id}x`), 'the delivery id is signed');
});

test('the retry waits double from the base', () => {
  assert.deepEqual([2, 3, 4].map((n) => retryDelayMs(n, 1000)), [1000, 2000, 4000]);
});

/** A Notifier over a scripted fetch: each answer is a status, 'slow' (200 after 20 ms), 'throw' or 'hang'. */
function harness(answers, target = {}, options = {}) {
  const calls = [];
  const audit = [];
  const fetch = (url, init) => {
    calls.push({ url, init });
    const a = answers[Math.min(calls.length, answers.length) - 1];
    if (a === 'throw') return Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } }));
    if (a === 'hang') {
      return new Promise((_, reject) => init.signal.addEventListener('abort', () => reject(init.signal.reason), { once: true }));
    }
    if (a === 'slow') return new Promise((r) => setTimeout(() => r(new Response(null, { status: 200 })), 20));
    return Promise.resolve(new Response(null, { status: a }));
  };
  const n = new Notifier({
    targets: () => [{ url: 'http://127.0.0.1:9/hook?token=abc', events: ['provider-open', 'give-up'], timeoutMs: 5000, ...target }],
    report: (r) => audit.push(r),
    secret: async (ref) => ({ HOOK_SECRET: 's3cret' })[ref],
    fetch,
    retryBaseMs: 1,
    graceMs: 50,
    stopRetryMs: 1,
    host: 'h1',
    ...options,
  });
  return { n, calls, audit };
}
// The sender's timers are unref'd (a pending retry never holds the host
// open), so a test holds the event loop itself while it waits.
async function settled(n) {
  const hold = setInterval(() => {}, 1000);
  try {
    await Promise.allSettled([...n.inflight]);
  } finally {
    clearInterval(hold);
  }
}
// The module's notifications, as an audit entry's `notify` holds them (plugin/codec/notify.go):
// each names the targets that chose its event, here the one harness target.
const OPEN = { event: 'provider-open', targets: [0], body: { channel: P, class: 'transient', cause: 'failures' } };
const GIVE_UP = { event: 'give-up', targets: [0], body: { channel: P, code: 'QUOTA', reason: 'no-routable-fallback', session: 's-1' } };
/** Notifier `n` is shown the open, as the audit subscriber shows it. */
const open = (n) => n.observe(OPEN, 'circuit-open');
const giveUp = (n) => n.observe(GIVE_UP, 'give-up');

test('the body is the module\'s fields between the type and the host, as before it said them', async () => {
  const at = Date.parse('2026-12-01T10:00:00.000Z');
  const { n, calls } = harness([204, 204, 204], { events: ['provider-open', 'give-up', 'returned'] }, { now: () => at });
  open(n);
  n.observe({ event: 'returned', targets: [0], body: { channel: 'deepseek-official/deepseek-v4-flash', from: 'mock/mock-b', session: 's-1' } }, 'return');
  await settled(n);
  const bodies = calls.map((c) => c.init.body.replace(/"delivery":"[^"]+"/, '"delivery":"D"'));
  assert.deepEqual(bodies, [
    '{"event":"provider-open","type":"circuit-open","time":"2026-12-01T10:00:00.000Z","channel":{"provider":"deepseek-official","model":"deepseek-v4-flash"},"class":"transient","cause":"failures","host":"h1","delivery":"D"}',
    '{"event":"returned","type":"return","time":"2026-12-01T10:00:00.000Z","channel":"deepseek-official/deepseek-v4-flash","from":"mock/mock-b","session":"s-1","host":"h1","delivery":"D"}',
  ]);
});

test('the audit subscriber hands over an entry\'s notification after writing its record, and nothing for a record without one', () => {
  const seen = [];
  const sub = auditSubscriber({ audit: { write: (r) => seen.push(['write', r.type]) }, logger: { info() {}, warn() {} },
    notify: (n, type) => seen.push(['notify', n.event, type]) });
  sub({ kind: 'circuit', audit: { record: { type: 'circuit-open', channel: P }, notify: OPEN } });
  sub({ kind: 'circuit', audit: { record: { type: 'circuit-open', channel: P } } }); // within the module's minute
  assert.deepEqual(seen, [['write', 'circuit-open'], ['notify', 'provider-open', 'circuit-open'], ['write', 'circuit-open']]);
});

test('a taken notification is one signed POST, and writes nothing', async () => {
  const { n, calls, audit } = harness([204], { secretEnv: 'HOOK_SECRET' });
  open(n);
  await settled(n);
  assert.equal(calls.length, 1);
  const { init } = calls[0];
  assert.equal(init.method, 'POST');
  assert.equal(init.headers['content-type'], 'application/json');
  const [, t] = /^t=(\d+),/.exec(init.headers[SIGNATURE_HEADER]);
  assert.equal(init.headers[SIGNATURE_HEADER], sign(init.body, 's3cret', Number(t), init.headers[DELIVERY_HEADER]));
  assert.ok(Math.abs(Number(t) - Date.now() / 1000) < 60, `the time is now, in seconds: ${t}`);
  assert.equal(JSON.parse(init.body).event, 'provider-open');
  assert.equal(JSON.parse(init.body).delivery, init.headers[DELIVERY_HEADER], 'the body names its delivery too');
  assert.equal(init.redirect, 'manual', 'a redirect is an answer, not followed');
  assert.deepEqual(audit, []);
});

test('a notification goes to the targets the module names, and no other', async () => {
  const { n, calls } = harness([200]);
  open(n);
  n.observe({ ...GIVE_UP, targets: [] }, 'give-up'); // the module's word: no target chose it
  await settled(n);
  assert.deepEqual(calls.map((c) => JSON.parse(c.init.body).event), ['provider-open']);
});

test('a refusing receiver is tried MAX_TRIES times, then one notify-failed line without the URL or secret', async () => {
  const { n, calls, audit } = harness(['throw'], { secretEnv: 'HOOK_SECRET' });
  open(n);
  await settled(n);
  assert.equal(calls.length, 3);
  assert.deepEqual(audit, [{ type: 'notify-failed', target: 0, origin: 'http://127.0.0.1:9', event: 'provider-open', tries: 3, reason: 'ECONNREFUSED' }]);
  assert.ok(!JSON.stringify(audit).includes('token=abc') && !JSON.stringify(audit).includes('s3cret'));
});

test('a 4xx answer is not tried again; a 5xx is', async () => {
  const four = harness([400]);
  open(four.n);
  await settled(four.n);
  assert.equal(four.calls.length, 1);
  assert.equal(four.audit[0].reason, 'HTTP 400');
  const five = harness([503, 200]);
  open(five.n);
  await settled(five.n);
  assert.equal(five.calls.length, 2);
  assert.deepEqual(five.audit, []);
});

test('a secretEnv that is not set sends nothing and says so', async () => {
  const { n, calls, audit } = harness([200], { secretEnv: 'NOT_SET_ANYWHERE' });
  open(n);
  await settled(n);
  assert.equal(calls.length, 0);
  assert.deepEqual([audit[0].tries, audit[0].reason], [0, 'secretEnv NOT_SET_ANYWHERE is not set']);
});

test('the secret is read once per notification: a retry in a stopping host, whose credentials are gone, is still signed', async () => {
  const { n, calls, audit } = harness([503, 200], { secretEnv: 'HOOK_SECRET' }, { retryBaseMs: 60_000 });
  let reads = 0;
  // As the host's: once the plugin is stopping, asking the credential service throws.
  n.secret = async (ref) => {
    reads += 1;
    if (n.closing.signal.aborted) throw new Error('cannot create effect on inactive context');
    return ({ HOOK_SECRET: 's3cret' })[ref];
  };
  giveUp(n);
  await new Promise((r) => setImmediate(r)); // the first try is under way
  await n.dispose();
  assert.equal(calls.length, 2);
  assert.deepEqual(audit, []);
  assert.equal(reads, 1);
  for (const { init } of calls) {
    const [, t] = /^t=(\d+),/.exec(init.headers[SIGNATURE_HEADER]);
    assert.equal(init.headers[SIGNATURE_HEADER], sign(init.body, 's3cret', Number(t), init.headers[DELIVERY_HEADER]));
  }
});

test('observe() returns before the receiver answers; a hanging one times out into one line', async () => {
  const { n, calls, audit } = harness(['hang'], { timeoutMs: 100 });
  open(n); // returns at once: the send goes on its own
  assert.equal(audit.length, 0);
  await settled(n);
  assert.equal(calls.length, 3);
  assert.equal(audit.length, 1);
  assert.match(audit[0].reason, /no answer within 100 ms/);
});

test('dispose lets a send in flight be taken within the grace', async () => {
  const { n, calls, audit } = harness(['slow']);
  open(n);
  await n.dispose(); // the answer comes 20 ms later, within the 50 ms grace
  assert.equal(calls.length, 1);
  assert.deepEqual(audit, []);
  assert.equal(n.inflight.size, 0);
});

test('dispose cuts a hanging send after the grace, audits it, and later records send nothing', async () => {
  const { n, calls, audit } = harness(['hang'], { timeoutMs: 60_000 });
  open(n);
  await new Promise((r) => setImmediate(r)); // the POST is under way
  await n.dispose();
  giveUp(n);
  assert.equal(calls.length, 1);
  assert.deepEqual(audit, [{ type: 'notify-failed', target: 0, origin: 'http://127.0.0.1:9', event: 'provider-open', tries: 1, reason: 'no answer before exit' }]);
});

// A headless run: the give-up is the turn's last record and the host starts
// stopping at once. The tries left go within the grace, a short wait apart,
// however long the ordinary backoff (here a minute) would have been.

test('a stopping host still retries a 503 within the grace: the second POST is taken', async () => {
  const { n, calls, audit } = harness([503, 200], {}, { retryBaseMs: 60_000 });
  giveUp(n);
  await n.dispose();
  assert.equal(calls.length, 2);
  assert.deepEqual(audit, []);
  assert.equal(calls[1].init.headers[DELIVERY_HEADER], calls[0].init.headers[DELIVERY_HEADER]);
});

test('a wait under way when the host stops is cut short: the retry goes within the grace', async () => {
  let answered;
  const first = new Promise((r) => { answered = r; });
  const { n, calls, audit } = harness([503, 200], {}, { retryBaseMs: 60_000 });
  const fetch = n.fetch;
  n.fetch = (url, init) => fetch(url, init).finally(() => answered());
  giveUp(n);
  await first;
  await new Promise((r) => setImmediate(r)); // the sender took the 503 and waits its minute
  assert.equal(calls.length, 1);
  await n.dispose();
  assert.equal(calls.length, 2);
  assert.deepEqual(audit, []);
});

test('a refusing receiver in a stopping host: every try within the grace, then notify-failed with the error code', async () => {
  const { n, calls, audit } = harness(['throw'], {}, { retryBaseMs: 60_000 });
  giveUp(n);
  await n.dispose();
  assert.equal(calls.length, 3);
  assert.deepEqual(audit, [{ type: 'notify-failed', target: 0, origin: 'http://127.0.0.1:9', event: 'give-up', tries: 3, reason: 'ECONNREFUSED' }]);
});

test('a receiver that redirects: one POST, the redirect not followed, audited with its status', async (t) => {
  const hits = [];
  const server = createServer((req, res) => {
    hits.push(req.url);
    req.resume();
    res.writeHead(302, { location: '/elsewhere' }).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise((r) => server.close(r)));
  const audit = [];
  const n = new Notifier({
    targets: () => [{ url: `http://127.0.0.1:${server.address().port}/hook`, events: ['give-up'], timeoutMs: 5000 }],
    report: (r) => audit.push(r), secret: async () => undefined, retryBaseMs: 1, host: 'h1',
  });
  giveUp(n);
  await settled(n);
  assert.deepEqual(hits, ['/hook'], 'tried once, never at the Location');
  assert.deepEqual(audit.map((a) => [a.tries, a.reason]), [[1, 'HTTP 302']]);
});

/** The receiver's recipe, as docs/telemetry.md gives it: the one js block that exports `check`. */
async function documentedRecipe() {
  const md = await readFile(new URL('../../docs/telemetry.md', import.meta.url), 'utf8');
  const blocks = [...md.matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]).filter((b) => b.includes('export function check'));
  assert.equal(blocks.length, 1, 'docs/telemetry.md holds the recipe');
  return import(`data:text/javascript,${encodeURIComponent(blocks[0])}`);
}
/** The hit a receiver gets: the exact body and the headers, named as Node's http gives them. */
const hitOf = (call) => ({ raw: call.init.body, headers: Object.fromEntries(Object.entries(call.init.headers).map(([k, v]) => [k.toLowerCase(), v])) });

test('the documented recipe takes a signed POST once: a replay of it is seen, a changed one refused', async () => {
  const { check, took } = await documentedRecipe();
  const { n, calls } = harness([204], { secretEnv: 'HOOK_SECRET' });
  open(n);
  await settled(n);
  const { raw, headers } = hitOf(calls[0]);
  assert.equal(check(raw, headers, 's3cret'), 'new');
  took(headers);
  assert.equal(check(raw, headers, 's3cret'), 'seen', 'the same delivery again is a replay (or a retry of one taken)');
  assert.equal(check(raw.replace('provider-open', 'give-up'), headers, 's3cret'), 'reject', 'the body is signed');
  assert.equal(check(raw, headers, 'another'), 'reject', 'under another secret');
  assert.equal(check(raw, { ...headers, [DELIVERY_HEADER]: crypto.randomUUID() }, 's3cret'), 'reject', 'the delivery id is signed');
});

test('a retry keeps its delivery id, with a fresh signature that verifies', async () => {
  const { check } = await documentedRecipe();
  const { n, calls } = harness([503, 200], { secretEnv: 'HOOK_SECRET' });
  open(n);
  await settled(n);
  assert.equal(calls.length, 2);
  const [a, b] = calls.map(hitOf);
  assert.match(a.headers[DELIVERY_HEADER], /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
  assert.equal(b.headers[DELIVERY_HEADER], a.headers[DELIVERY_HEADER]);
  assert.equal(JSON.parse(b.raw).delivery, a.headers[DELIVERY_HEADER]);
  assert.equal(check(a.raw, a.headers, 's3cret'), 'new');
  assert.equal(check(b.raw, b.headers, 's3cret'), 'new', 'the first was not taken: the retry is');
  // Another notification is another delivery.
  const other = harness([204], { secretEnv: 'HOOK_SECRET' });
  open(other.n);
  await settled(other.n);
  assert.notEqual(hitOf(other.calls[0]).headers[DELIVERY_HEADER], a.headers[DELIVERY_HEADER]);
});

test('the documented recipe refuses a POST signed more than five minutes ago', async () => {
  const { check } = await documentedRecipe();
  for (const [agoMs, want] of [[301_000, 'reject'], [240_000, 'new']]) {
    const { n, calls } = harness([204], { secretEnv: 'HOOK_SECRET' }, { now: () => Date.now() - agoMs });
    open(n);
    await settled(n);
    const { raw, headers } = hitOf(calls[0]);
    assert.equal(check(raw, headers, 's3cret'), want, `signed ${agoMs} ms ago`);
  }
});
