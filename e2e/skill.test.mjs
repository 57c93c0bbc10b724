// The bundled skill configure-resilience in the real host: model-visible
// context, so the model's first request lists it only when the row says
// `skill: true`; a row that leaves the key out (or turns it off) lists no
// skill of the plugin's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startFakeProvider } from './fake-provider/fake-provider.mjs';
import { makeHome, PRIMARY, runHeadless } from './harness.mjs';

describe('the bundled skill', () => {
  let fp;
  before(async () => { fp = await startFakeProvider({}); });
  after(() => fp.close());

  for (const [name, plugin, offered] of [
    ['a row without `skill`: the model is not offered it', {}, false],
    ['`skill: false`: the model is not offered it', { skill: false }, false],
    ['`skill: true`: the model is offered it at the first request', { skill: true }, true],
  ]) {
    test(name, async (t) => {
      const home = await makeHome({ baseURL: fp.baseURL, plugin, primaryRetry: 'stock', secondaryRetry: 'stock' });
      t.after(home.cleanup);
      fp.reset();
      fp.script(PRIMARY.model, [{ kind: 'success', text: 'ok' }]);
      const r = await runHeadless(home, 'Reply with OK');
      assert.equal(r.code, 0, r.stderr);
      const sent = JSON.stringify(fp.requests[0].body);
      if (offered) assert.match(sent, /configure-resilience/, 'the model was offered the skill');
      else assert.doesNotMatch(sent, /configure-resilience/, 'nothing of the plugin reached the model');
    });
  }
});
