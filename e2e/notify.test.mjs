// Webhook notifications in the real host: an outage scripted in the fake
// provider (the primary's balance runs out, it opens, its probe succeeds and
// the session's next step returns to it) reaches a receiver this test runs
// as exactly one signed "provider-open" and one "returned"; a receiver that
// never answers, and one that refuses, change nothing in the provider's
// request timeline and cost one audit line per delivery not taken. A headless
// give-up (the run's last record: the host exits at once) is still retried
// after a 503 before the process ends, and a refused one is audited.
//
// One headless task spans the outage: the secondary's answer is a call to a
// test tool (e2e/fixtures/gate-tool) that returns only when the test opens a
// gate, which it does once the audit log shows the primary closed again. So
// the return is waited for on a condition, never a clock.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';
import { refusedURL, startHook, until, verifyWith } from './receivers.mjs';

const SECRET = 'whsec-test-4471';
const GATE = join(ROOT, 'e2e/fixtures/gate-tool');
const same = (a, c) => a?.provider === c.provider && a?.model === c.model;
const key = (c) => `${c.provider}/${c.model}`;

const verify = (hit) => verifyWith(SECRET, hit);

describe('webhook notifications in the real host', { concurrency: false }, () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  /**
   * One outage and return, in one headless task, with `notify` as given.
   * `openGateWhen(audit)` adds to the condition for letting the turn go on.
   */
  async function outage(t, notify, openGateWhen = () => true) {
    fp.reset();
    // The 402, then the probe and the returning step: both answered.
    fp.script(PRIMARY.model, ['insufficient_balance', { kind: 'success', text: 'back on the primary' }]);
    fp.script(SECONDARY.model, [{ kind: 'tool_call', name: 'wait_for_gate', arguments: {} }, { kind: 'success', text: 'stayed on the secondary' }]);
    const home = await makeHome({
      baseURL: fp.baseURL,
      primaryRetry: 'stock',
      // A short open time: this test is about what is sent, not when the probe runs.
      plugin: { chain: [PRIMARY, SECONDARY], cooldownMs: 300, notify },
      extraPlugins: [{ dir: GATE, id: 'gate-tool', config: {} }],
    });
    t.after(home.cleanup);
    const env = home.env;
    home.env = (extra) => env({ ...extra, HOOK_SECRET: SECRET });
    const run = runHeadless(home, 'Wait for the gate, then answer');
    let result;
    run.then((r) => { result = r; });
    await until(async () => {
      if (result) return true; // the turn ended early: the assertions below say why
      const audit = await auditRecords(home);
      return audit.some((a) => a.type === 'circuit-closed' && same(a.channel, PRIMARY)) && openGateWhen(audit);
    }, 'the primary to close again');
    await writeFile(join(home.dsh, 'gate-open'), '');
    const r = await run;
    // Each model's requests in order: the probe may go before or after the
    // failover request (the open time is short), so the two lanes are compared apart.
    const timeline = {};
    for (const q of fp.requests) (timeline[q.model] ??= []).push(q.step);
    return { r, home, audit: await auditRecords(home), timeline };
  }

  let fastTimeline;

  test('one outage: exactly one signed provider-open and one returned', async (t) => {
    const hook = await startHook('ok');
    t.after(hook.close);
    const { r, audit, timeline } = await outage(t, [{ url: hook.url, events: ['provider-open', 'returned', 'give-up'], secretEnv: 'HOOK_SECRET' }]);

    assert.equal(r.stdout.trim(), 'back on the primary', `${r.stderr}\n${JSON.stringify(audit.map((a) => a.type))}`);
    assert.equal(r.code, 0);
    assert.ok(audit.some((a) => a.type === 'return'), 'the session returned to the primary');
    assert.deepEqual(timeline, {
      [PRIMARY.model]: ['insufficient_balance', 'success', 'success'], // the 402, the probe, the returning step
      [SECONDARY.model]: ['tool_call'],
    });
    await until(() => hook.got.length >= 2, 'two notifications', 10_000);
    const events = hook.got.map((h) => h.body.event);
    assert.deepEqual(events.filter((e) => e === 'provider-open'), ['provider-open'], JSON.stringify(hook.got.map((h) => h.body)));
    assert.deepEqual(events.filter((e) => e === 'returned'), ['returned']);
    assert.deepEqual(events.filter((e) => e === 'give-up'), [], 'nothing was given up');
    const open = hook.got.find((h) => h.body.event === 'provider-open').body;
    assert.ok(same(open.channel, PRIMARY), JSON.stringify(open));
    assert.equal(open.class, 'quota');
    assert.equal(typeof open.host, 'string');
    assert.ok(!Number.isNaN(Date.parse(open.time)));
    const back = hook.got.find((h) => h.body.event === 'returned').body;
    assert.equal(back.channel, key(PRIMARY));
    assert.equal(back.from, key(SECONDARY));
    assert.equal(back.session, audit.find((a) => a.type === 'return').agent);
    for (const hit of hook.got) {
      assert.ok(verify(hit), `signed with the secret: ${hit.headers['x-dsh-resilience-signature']}`);
      assert.equal(hit.headers['content-type'], 'application/json');
    }
    const text = JSON.stringify(audit);
    assert.ok(!text.includes(SECRET) && !text.includes('t-9921'), 'neither the secret nor the URL\'s token is in the audit log');
    assert.ok(!audit.some((a) => a.type === 'notify-failed'));
    fastTimeline = timeline;
  });

  test('a receiver that hangs and one that refuses: the same request timeline, one notify-failed line per delivery not taken', async (t) => {
    assert.ok(fastTimeline, 'the first test ran');
    const hook = await startHook('hang');
    t.after(hook.close);
    const refused = await refusedURL();
    const notify = [
      // Its answer would take a minute: were a send in the way, the turn would wait that long.
      { url: hook.url, events: ['provider-open', 'returned'], secretEnv: 'HOOK_SECRET', timeoutMs: 60_000 },
      { url: refused, events: ['provider-open'] },
    ];
    // The refused target's tries (three, a second and two apart) end before the gate opens.
    const { r, audit, timeline } = await outage(t, notify, (a) => a.some((x) => x.type === 'notify-failed'));

    assert.equal(r.stdout.trim(), 'back on the primary', `${r.stderr}\n${JSON.stringify(audit.map((a) => a.type))}`);
    assert.equal(r.code, 0);
    assert.deepEqual(timeline, fastTimeline, 'the provider saw the same requests, in the same order on each model');
    assert.ok(hook.got.length >= 1 && hook.pending() === hook.got.length,
      `the hanging receiver still held every POST when the turn had ended: ${hook.pending()} of ${hook.got.length}`);
    const failed = audit.filter((a) => a.type === 'notify-failed');
    // The refused target's three tries, then at the exit the hanging target's two POSTs, cut after the grace.
    assert.deepEqual(failed[0] && [failed[0].target, failed[0].event, failed[0].tries, failed[0].origin, failed[0].reason],
      [1, 'provider-open', 3, new URL(refused).origin, 'ECONNREFUSED'], JSON.stringify(failed));
    assert.deepEqual(failed.slice(1).map((f) => [f.target, f.event, f.tries, f.reason]).sort(),
      [[0, 'provider-open', 1, 'no answer before exit'], [0, 'returned', 1, 'no answer before exit']], JSON.stringify(failed));
    assert.equal(audit.at(-1).type, 'stop', 'the cut deliveries are audited before the plugin\'s last line');
    assert.ok(failed.every((f) => !JSON.stringify(f).includes('/hook')), 'no URL path in the line');
    // The failover did not wait for any receiver: generous sanity against the 60 s hang.
    const reqs = fp.requests;
    const gap = reqs.find((q) => q.model === SECONDARY.model).at - reqs[0].at;
    assert.ok(gap < 30_000, `the failover request came ${gap} ms after the 402`);
  });

  test('a headless give-up: a receiver\'s 503 is retried and taken before the process exits; a refused one is audited', async (t) => {
    // No chain: the 402 is given up at once, the turn ends, and the host stops
    // right after the give-up record. Each webhook has only the exit's grace.
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance']);
    const hook = await startHook([503, 204]);
    t.after(hook.close);
    const refused = await refusedURL();
    const home = await makeHome({
      baseURL: fp.baseURL, primaryRetry: 'stock',
      plugin: { notify: [{ url: hook.url, events: ['give-up'], secretEnv: 'HOOK_SECRET' }, { url: refused, events: ['give-up'] }] },
    });
    t.after(home.cleanup);
    const env = home.env;
    home.env = (extra) => env({ ...extra, HOOK_SECRET: SECRET });

    const r = await runHeadless(home, 'Reply with OK');

    assert.equal(r.code, 1, r.stderr);
    const audit = await auditRecords(home);
    const giveUp = audit.find((a) => a.type === 'give-up');
    assert.ok(giveUp, JSON.stringify(audit.map((a) => a.type)));
    // Read as the process ended, not waited for: the retry came before the exit.
    assert.deepEqual(hook.got.map((h) => [h.body.event, h.status]), [['give-up', 503], ['give-up', 204]], 'the 503, then the retry taken');
    const [first, second] = hook.got;
    assert.equal(second.headers['x-dsh-resilience-delivery'], first.headers['x-dsh-resilience-delivery'], 'one delivery, tried twice');
    assert.equal(second.body.delivery, first.headers['x-dsh-resilience-delivery']);
    assert.equal(second.body.session, String(giveUp.agent));
    assert.ok(hook.got.every((h) => verify(h)), 'each try signed over its time, the delivery id and the body');
    const failed = audit.filter((a) => a.type === 'notify-failed');
    assert.deepEqual(failed.map((f) => [f.target, f.event, f.tries, f.reason, f.origin]), [[1, 'give-up', 3, 'ECONNREFUSED', new URL(refused).origin]]);
    assert.equal(audit.at(-1).type, 'stop', 'audited before the plugin\'s last line');
  });

  test('a notify config with a bad URL ends the first turn naming notify[0].url, before any model request, the URL never quoted', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], notify: [{ url: 'ftp://x/y?token=t-1', events: ['give-up'] }] } });
    t.after(home.cleanup);
    const before = fp.requests.length;
    const r = await runHeadless(home, 'Reply with OK');
    assert.notEqual(r.code, 0);
    // A policy key is the module's to check (policy/notifytarget.go), as every key but the
    // shim's own files and Redis: the bring-up refuses the row, as tool-retry's e2e shows.
    assert.ok(r.stderr.includes('config key "notify[0].url": must be an http:// or https:// URL'), r.stderr.slice(0, 600));
    assert.ok(!r.stderr.includes('t-1'), 'the URL is not quoted back');
    assert.equal(r.stdout.trim(), '');
    assert.equal(fp.requests.length, before, 'no model request went');
  });
});
