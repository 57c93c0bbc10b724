// dsh-reconnect's unknown-error cap in the real host with its STOCK retry
// settings: a reconnect-style row (persistent, no chain) with
// `retryUnknown: false, unknownMaxRetries: 2` against a route that keeps
// failing with an unknown code hands the third failure back, and the
// headless run ends with it; with retryUnknown on (the default) the same
// outage is ridden out.
//
// What counts: the route is the pi-ai `mock` route, which reports a 409 it
// cannot read as PI_AI_ERROR with no status, so the module classes it
// unknown. The stock dsh-llm-retry retries only EMPTY_RESPONSE, RATE_LIMIT,
// SERVER, TIMEOUT and TRANSPORT, so it declines every one of them: each
// request the provider receives is the turn's first or one of the module's
// own retries, and the cap of 2 retries is 3 requests. (Had the host retried
// the code itself, its attempts would count too: the module counts the
// provider's answers, whoever asked again.)
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, runHeadless, SECONDARY } from './harness.mjs';

const B = SECONDARY; // mock/mock-b, a pi-ai route
const STOCK = { primaryRetry: 'stock', secondaryRetry: 'stock' };
const UNREADABLE = { kind: 'status', status: 409, message: 'conflict, try again' };
// Four unknown failures, then an answer: more than the cap allows, fewer than persistent rides out.
const OUTAGE = [UNREADABLE, UNREADABLE, UNREADABLE, UNREADABLE, { kind: 'success', text: 'the route is back' }];
// A reconnect-style row (what `migrate` prints for one), with short plugin waits so the test is quick.
const RECONNECT = { persistent: true, backoffBaseMs: 100, backoffMaxMs: 200 };

let fp;
before(async () => { fp = await startFakeProvider({}); });
after(() => fp.close());

test('retryUnknown off, unknownMaxRetries 2: three requests reach the provider, then the failure goes back and the run ends with it', async (t) => {
  fp.reset();
  fp.script(B.model, OUTAGE);
  const h = await makeHome({ baseURL: fp.baseURL, ...STOCK, defaultModel: `${B.provider}/${B.model}`,
    plugin: { ...RECONNECT, retryUnknown: false, unknownMaxRetries: 2 } });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.deepEqual(fp.counts(), { [B.model]: 3 }, r.stderr);
  assert.notEqual(r.code, 0, 'the run ends with the failure');
  assert.doesNotMatch(r.stdout, /the route is back/);
  const audit = await auditRecords(h);
  assert.ok(audit.some((a) => a.type === 'boot'), 'the plugin came up with this row');
  const gaveUp = audit.filter((a) => a.type === 'give-up');
  assert.equal(gaveUp.length, 1, JSON.stringify(audit));
  assert.equal(gaveUp[0].reason, 'unknown-retries-spent');
  assert.equal(gaveUp[0].code, 'PI_AI_ERROR');
  assert.equal(audit.filter((a) => a.type === 'retry').length, 2, 'two retries of the module before the hand-back');
});

test('retryUnknown on (the default): the same outage is ridden out on the only route', async (t) => {
  fp.reset();
  fp.script(B.model, OUTAGE);
  const h = await makeHome({ baseURL: fp.baseURL, ...STOCK, defaultModel: `${B.provider}/${B.model}`, plugin: RECONNECT });
  t.after(h.cleanup);

  const r = await runHeadless(h, 'Reply with OK');

  assert.equal(r.stdout.trim(), 'the route is back', r.stderr);
  assert.equal(r.code, 0);
  assert.deepEqual(fp.counts(), { [B.model]: 5 });
  assert.equal((await auditRecords(h)).filter((a) => a.type === 'give-up').length, 0);
});
