// A headless run ends when its answer is printed: the plugin's disposer, and
// everything it started, settle at once. The host gives its plugins 5 s to
// dispose and then forces the exit; a plugin that leaves an activation
// callback waiting on a bring-up that never comes costs the user those 5 s
// on every run. It did, in every home the plugin had run in before (the cold
// start: host-shim/cold-start.js), until the disposer settled the bring-up.
// The host's stock retry settings throughout.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { makeHome, PRIMARY, runHeadless, SECONDARY } from './harness.mjs';

/** How long a run may outlive its answer: the host's own teardown takes a few hundred ms on a loaded machine. */
const GRACE_MS = 1000;

describe('a headless run exits with its answer', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  /** One run that answers from the primary; its stall after the answer, in ms. */
  async function answered(home) {
    fp.reset();
    fp.script(PRIMARY.model, [{ kind: 'success', text: 'OK' }]);
    const r = await runHeadless(home, 'Reply with OK');
    assert.equal(r.stdout.trim(), 'OK', r.stderr);
    assert.equal(r.code, 0, r.stderr);
    return r.ms - r.answerMs;
  }

  test('in a fresh home and in one used before (a cold start), within a second of the answer', async (t) => {
    const home = await makeHome({ baseURL: fp.baseURL, primaryRetry: 'stock', plugin: { chain: [PRIMARY, SECONDARY] } });
    t.after(home.cleanup);
    const fresh = await answered(home);
    const word = JSON.parse(await readFile(join(home.dsh, 'dsh-resilience/cold-start.json'), 'utf8'));
    assert.equal(word.coldPass, true, 'the first run left the word for a cold start');
    const warm = [await answered(home), await answered(home)];
    t.diagnostic(`after the answer: fresh ${fresh} ms, warm ${warm.join(', ')} ms`);
    assert.ok(fresh <= GRACE_MS, `a fresh home's run outlived its answer by ${fresh} ms`);
    for (const ms of warm) assert.ok(ms <= GRACE_MS, `a warm home's run outlived its answer by ${ms} ms`);
  });
});
