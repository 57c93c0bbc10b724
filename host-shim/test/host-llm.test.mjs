// The host's llm package loads behind activation (host-llm.js): a stream
// opened before the import has settled waits for it inside the stream it gets,
// and one opened after gets the listener's own answer at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { afterHostLlm, hostLlm, hostLlmNow } from '../host-llm.js';

async function* chunks(...xs) {
  yield* xs;
}

const read = async (stream) => {
  const out = [];
  for await (const x of stream) out.push(x);
  return out;
};

test('a stream opened before the package has loaded waits for it, then is the listener\'s stream', async () => {
  const seen = [];
  const listener = afterHostLlm((options, next) => {
    seen.push({ options, settled: true, pkg: hostLlmNow() });
    return next();
  });
  const early = listener({ purpose: 'first' }, () => chunks('a', 'b'));
  assert.equal(seen.length, 0, 'the listener has not run yet: the package is still loading');
  assert.deepEqual(await read(early), ['a', 'b']);
  assert.equal(seen.length, 1);
  assert.equal(seen[0].pkg, await hostLlm(), 'it ran with the import settled');

  const later = listener({ purpose: 'second' }, () => 'the next listener\'s stream');
  assert.equal(later, 'the next listener\'s stream', 'once settled, the listener answers at once');
});
