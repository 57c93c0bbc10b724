// The host's telemetry seam in the real host: the host's own OTel backend
// (@deepseek-ai/dsh-session-telemetry-otel, mounted by dsh-base and switched
// by DSH_TELEMETRY_MODE / DSH_TELEMETRY_OTLP_URL) exports to an OTLP/HTTP
// receiver this test runs on 127.0.0.1, and the plugin's records arrive there
// with their severity and attributes, and without the prompt's text.
//
// The harness sets DSH_TELEMETRY_DISABLED=1 for every test (any non-empty
// value makes the host patch the telemetry row disabled at boot); this test
// alone sets it empty, which the host reads as unset.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { auditRecords, makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';
import { ours, startReceiver } from './receivers.mjs';

const PROMPT = 'Reply with OK, secret-prompt-marker-6120';


describe('telemetry through the host\'s OTel backend', () => {
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

  test('an outage reaches the OTLP receiver: open (WARN), failover (INFO), with channel, code, class, session; no prompt text', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], spillAfter: 0 }, primaryRetry: 'stock' }); // the outage opens the primary
    t.after(home.cleanup);
    const env = home.env;
    home.env = (extra) => env({ ...extra, DSH_TELEMETRY_DISABLED: '', DSH_TELEMETRY_MODE: 'FULL', DSH_TELEMETRY_OTLP_URL: rx.url });

    const r = await runHeadless(home, PROMPT);
    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);

    // The batch processor exports on its schedule or at the host's shutdown
    // drain, which the run's exit includes; wait for the records, not a time.
    const deadline = Date.now() + 120_000; // only stops a hung test
    while (!ours(rx.records).some((x) => x.attributes['resilience.type'] === 'failover') && Date.now() < deadline) {
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(rx.raw.every((x) => /json/.test(x.contentType)), `OTLP/JSON: ${rx.raw.map((x) => x.contentType)}`);
    const got = ours(rx.records);
    assert.ok(rx.records.length > got.length, 'the host\'s own session records arrive too: the backend is the host\'s');
    const audit = await auditRecords(home);

    const open = got.find((x) => x.attributes['resilience.type'] === 'circuit-open');
    assert.ok(open, `a circuit-open record: ${got.map((x) => x.attributes['telemetry.op'])}`);
    assert.equal(open.severityText, 'WARN');
    assert.equal(open.severityNumber, 13);
    assert.equal(open.attributes['channel.provider'], PRIMARY.provider);
    assert.equal(open.attributes['channel.model'], PRIMARY.model);
    assert.equal(open.attributes['error.class'], 'transient');

    const failover = got.find((x) => x.attributes['resilience.type'] === 'failover');
    const audited = audit.find((a) => a.type === 'failover');
    assert.equal(failover.severityText, 'INFO');
    assert.deepEqual(
      [failover.attributes['from.model'], failover.attributes['to.provider'], failover.attributes['to.model'], failover.attributes['error.code'], failover.attributes['error.class']],
      [PRIMARY.model, SECONDARY.provider, SECONDARY.model, 'RATE_LIMIT', 'transient'],
    );
    assert.equal(failover.attributes['session.id'], audited.agent);
    assert.ok(failover.scope.endsWith('/ops'), `the host's ops scope: ${failover.scope}`);
    // One to one: as many of ours as the audit log has records of the mapped kinds.
    const mapped = audit.filter((a) => ['circuit-open', 'failover', 'retry', 'give-up', 'circuit-closed', 'circuit-half-open'].includes(a.type));
    assert.equal(got.filter((x) => mapped.some((a) => a.type === x.attributes['resilience.type'])).length, mapped.length);

    for (const x of got) assert.ok(!x.text.includes('secret-prompt-marker'), `no prompt text in ${x.text}`);
    assert.ok(rx.records.some((x) => x.text.includes('secret-prompt-marker')), 'the prompt does travel in the host\'s own FULL records, so the check above can fail');
  });

  test('with telemetry disabled (the harness default) nothing is sent and the outage is handled the same', async (t) => {
    fp.reset();
    fp.script(PRIMARY.model, ['rate_limit']);
    fp.script(SECONDARY.model, [{ kind: 'success', text: 'answer from the secondary' }]);
    const before = rx.raw.length;
    const home = await makeHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], spillAfter: 0 }, primaryRetry: 'stock' }); // the outage opens the primary
    t.after(home.cleanup);
    const env = home.env;
    home.env = (extra) => env({ ...extra, DSH_TELEMETRY_MODE: 'FULL', DSH_TELEMETRY_OTLP_URL: rx.url });

    const r = await runHeadless(home, PROMPT);
    assert.equal(r.stdout.trim(), 'answer from the secondary', r.stderr);
    assert.equal(r.code, 0);
    assert.ok((await auditRecords(home)).some((a) => a.type === 'failover'));
    assert.equal(rx.raw.length, before, 'no export reached the receiver');
  });
});
