// The web RPC's bad inputs in the real web profile, through its own
// transport (`POST /dsh-resilience/<endpoint>` with the client-request body
// the browser bundle sends). No browser: the inputs are what a page, a
// script on the machine or a bug could send. Each is refused with a short
// answer, and nothing is written.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from '../fake-provider/fake-provider.mjs';
import { auditRecords } from '../harness.mjs';
import { makeWebHome, PRIMARY, SECONDARY, startWeb } from './web-harness.mjs';

const POOLS = [{ name: 'main', routes: [PRIMARY, SECONDARY] }];

describe('the web RPC refuses bad input where it enters', { concurrency: false }, () => {
  let fp;
  let home;
  let web;
  let n = 0;
  /** One RPC call as the browser makes it: the reply's result and its size on the wire. */
  const call = async (endpoint, payload) => {
    const res = await fetch(`${new URL(web.url).origin}/dsh-resilience/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'client-request', rpcId: `r${++n}`, method: endpoint, payload }),
    });
    const text = await res.text();
    let result;
    try { result = JSON.parse(text).result; } catch { result = undefined; }
    return { status: res.status, bytes: text.length, result };
  };
  const stateFile = (name) => readFile(join(home.dsh, 'dsh-resilience', name), 'utf8').catch(() => undefined);

  before(async () => {
    fp = await startFakeProvider({});
    home = await makeWebHome({ baseURL: fp.baseURL, plugin: { chain: [PRIMARY, SECONDARY], pools: POOLS, probes: false } });
    web = await startWeb(home);
  });
  after(async () => {
    await web?.stop();
    await fp?.close();
    await home?.cleanup();
  });

  test('a made-up or 1 MB session id, and a 10 MB value: refused in a short answer, nothing stored', async () => {
    const made = await call('set-quota', { session: 'made-up-session', value: 'off' });
    assert.equal(made.result?.error?.code, 'bad-request', JSON.stringify(made)); // the host's own code: its browser caller takes no other
    assert.equal(made.result?.error?.details?.issues?.[0]?.code, 'UNKNOWN_SESSION', JSON.stringify(made));
    const big = await call('set-quota', { session: 'x'.repeat(1 << 20), value: 'off' });
    assert.equal(big.result?.ok ?? false, false);
    assert.ok(big.bytes < 1000, `a reply of ${big.bytes} bytes`);
    const huge = await call('set-pool', { session: 'made-up-session', value: 'v'.repeat(10 << 20) });
    assert.equal(huge.result?.ok ?? false, false);
    assert.ok(huge.bytes < 1000, `a reply of ${huge.bytes} bytes`);
    assert.equal(await stateFile('quota-sessions.json'), undefined, 'no settings file written');
    assert.deepEqual((await auditRecords(home)).filter((a) => /quota-(switch|pool)/.test(a.type)), []);
  });

  test('set-backup with the channel missing, null or under __proto__ is refused and the backup kept', async () => {
    const set = await call('set-backup', { channel: `${SECONDARY.provider}/${SECONDARY.model}` });
    assert.equal(set.result?.ok, true, JSON.stringify(set.result));
    const before = await stateFile('backup.json');
    assert.match(before, /"channel":\{"provider":/);
    for (const payload of [{}, { channel: null }, JSON.parse(`{"__proto__": {"channel": "${PRIMARY.provider}/${PRIMARY.model}"}}`)]) {
      const r = await call('set-backup', payload);
      assert.equal(r.result?.error?.details?.issues?.[0]?.code, 'INVALID', JSON.stringify(payload));
    }
    assert.equal(await stateFile('backup.json'), before, 'the backup file is untouched');
    const cleared = await call('set-backup', { clear: true });
    assert.equal(cleared.result?.value?.backup, null);
  });
});
