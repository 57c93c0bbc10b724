// Telemetry and webhooks for the decisions an operator alerts on beyond an
// outage's open and return (those are proven in telemetry.test.mjs and
// notify.test.mjs): a give-up, a long quota wait and a tool-call retry, each
// in the real host with its own scripted failure, exported through the
// host's OTel backend to an OTLP receiver and (give-up, quota wait) posted
// to a webhook receiver, both on 127.0.0.1. Each reaches the receivers one
// to one with its audit record, with the severity mapped, signed, and with
// no prompt text.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, ROOT, runHeadless, SECONDARY } from './harness.mjs';
import { ours, startHook, startReceiver, until, verifyWith } from './receivers.mjs';

const SECRET = 'whsec-kinds-3318';
const PROMPT = 'Reply with OK, secret-prompt-marker-8842';
const SPENT_FOR_AN_HOUR = { kind: 'usage_cap_zh', retryAfter: 3600 };
const POOLS = [{ name: 'main', routes: [PRIMARY, SECONDARY] }];
const runner = (config) => ({ dir: join(ROOT, 'e2e/fixtures/command-runner'), id: 'command-runner', config });
const TOOL = 'flaky_lookup';

describe('telemetry and webhooks for a give-up, a quota wait and a tool retry', { concurrency: false }, () => {
  let fp;
  let rx;
  before(async () => {
    fp = await startFakeProvider({});
    rx = await startReceiver();
  });
  after(async () => {
    await fp.close();
    await rx.close();
  });

  /** A home exporting to the OTLP receiver (the host's FULL mode) with the hook's secret in its env. */
  async function observed(t, plugin, extraPlugins) {
    const home = await makeHome({ baseURL: fp.baseURL, plugin, extraPlugins });
    t.after(home.cleanup);
    const env = home.env;
    home.env = (extra) => env({ ...extra, DSH_TELEMETRY_DISABLED: '', DSH_TELEMETRY_MODE: 'FULL', DSH_TELEMETRY_OTLP_URL: rx.url, HOOK_SECRET: SECRET });
    return home;
  }

  /** Our exported records of `types` for this run's sessions, once every audited one has arrived. */
  async function exported(audit, types) {
    const sessions = new Set(audit.map((a) => a.agent).filter(Boolean));
    const want = audit.filter((a) => types.includes(a.type));
    const mine = () => ours(rx.records).filter((x) => types.includes(x.attributes['resilience.type'])
      && (x.attributes['session.id'] === undefined || sessions.has(x.attributes['session.id'])));
    // The batch processor exports at the host's shutdown drain at the latest.
    await until(() => mine().length >= want.length, `${want.length} records of ${types}`, 60_000);
    return mine();
  }

  const noPrompt = (records) => {
    for (const x of records) assert.ok(!x.text.includes('secret-prompt-marker'), `no prompt text in ${x.text}`);
  };

  test('a give-up: one ERROR record and one signed give-up webhook, naming the channel that ended the turn', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [SPENT_FOR_AN_HOUR]);
    const hook = await startHook('ok');
    t.after(hook.close);
    const home = await observed(t, {
      chain: [PRIMARY, SECONDARY], cooldownMs: 10_000, spillAfter: 0, giveUpAfterMs: 5_000,
      notify: [{ url: hook.url, events: ['give-up', 'quota-wait'], secretEnv: 'HOOK_SECRET' }],
    });

    const r = await runHeadless(home, PROMPT);

    assert.equal(r.code, 1, r.stderr);
    const audit = await auditRecords(home);
    const giveUp = audit.find((a) => a.type === 'give-up');
    assert.ok(giveUp, JSON.stringify(audit.map((a) => a.type)));
    const [rec] = await exported(audit, ['give-up']);
    assert.equal(rec.severityText, 'ERROR');
    assert.deepEqual([rec.attributes['channel.provider'], rec.attributes['channel.model'], rec.attributes['resilience.reason'], rec.attributes['error.code']],
      [SECONDARY.provider, SECONDARY.model, giveUp.reason, giveUp.code]);
    assert.equal(rec.attributes['session.id'], giveUp.agent);
    noPrompt(ours(rx.records));

    await until(() => hook.got.length >= 1, 'the give-up webhook', 10_000);
    assert.deepEqual(hook.got.map((h) => h.body.event), ['give-up']);
    const body = hook.got[0].body;
    assert.deepEqual([body.channel, body.reason, body.code, body.session], [SECONDARY, giveUp.reason, giveUp.code, String(giveUp.agent)]);
    assert.ok(verifyWith(SECRET, hook.got[0]), 'signed');
  });

  test('a long quota wait: entered and left reach the receiver, and one signed quota-wait webhook', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['insufficient_balance', { kind: 'success', text: 'recovered on the primary' }]);
    fp.script(SECONDARY.model, ['usage_cap_zh']);
    const hook = await startHook('ok');
    t.after(hook.close);
    const home = await observed(t, {
      pools: POOLS, probes: false, quota: { longTermDelayMs: 1500 },
      notify: [{ url: hook.url, events: ['give-up', 'quota-wait'], secretEnv: 'HOOK_SECRET' }],
    }, [runner({ service: { pool: 'main' } })]);

    const r = await runHeadless(home, PROMPT);

    assert.equal(r.stdout.trim(), 'recovered on the primary', r.stderr);
    assert.equal(r.code, 0);
    const audit = await auditRecords(home);
    const entered = audit.find((a) => a.type === 'quota-wait-entered');
    assert.ok(entered && audit.some((a) => a.type === 'quota-wait-left'), JSON.stringify(audit.map((a) => a.type)));
    const recs = await exported(audit, ['quota-wait-entered', 'quota-wait-left']);
    const inRec = recs.find((x) => x.attributes['resilience.type'] === 'quota-wait-entered');
    assert.equal(inRec.severityText, 'INFO');
    assert.deepEqual([inRec.attributes['quota.pool'], inRec.attributes['quota.provider']], ['main', entered.provider]);
    assert.equal(inRec.attributes['session.id'], entered.agent);
    noPrompt(recs);

    await until(() => hook.got.length >= 1, 'the quota-wait webhook', 10_000);
    assert.deepEqual(hook.got.map((h) => h.body.event), ['quota-wait'], 'one per wait, nothing given up');
    const body = hook.got[0].body;
    assert.deepEqual([body.pool, body.channel, body.session], ['main', { provider: entered.provider, model: '*' }, String(entered.agent)]);
    assert.equal(body.nextAttemptAt, entered.nextAttemptAt);
    assert.ok(verifyWith(SECRET, hook.got[0]), 'signed');
  });

  test('a tool retry: each repeat and the recovery reach the receiver, with the tool and attempt, no arguments', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'tool_call', name: TOOL, arguments: { query: 'secret-prompt-marker-arg' } }, { kind: 'success', text: 'done' }]);
    const home = await observed(t, { tools: { retry: [TOOL], backoffMs: 100, maxBackoffMs: 400 } },
      [{ dir: join(ROOT, 'e2e/fixtures/flaky-tools'), id: 'flaky-tools', config: { tools: [{ name: TOOL, script: [{ kind: 'reset' }, { kind: 'ok', answer: 'fine' }] }] } }]);

    const r = await runHeadless(home, PROMPT);

    assert.equal(r.stdout.trim(), 'done', r.stderr);
    assert.equal(r.code, 0);
    const audit = await auditRecords(home);
    const recs = await exported(audit, ['tool-retry', 'tool-recovered']);
    assert.deepEqual(recs.map((x) => [x.attributes['resilience.type'], x.attributes['tool.name'], x.attributes['resilience.attempt'], x.severityText]),
      [['tool-retry', TOOL, 1, 'INFO'], ['tool-recovered', TOOL, 2, 'INFO']]);
    assert.equal(recs[0].attributes['resilience.reason'], 'socket');
    noPrompt(recs);
  });
});
