// enabled: false (off.js): the plugin installs nothing but `/resilience` and
// a web channel that answers every call "off", so the client bundle (which
// the host loads whatever the row says) tells the user instead of polling.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyOff, OFF_ANSWER } from '../off.js';
import { RPC_CHANNEL } from '../web.js';

function fakeCtx() {
  const handled = new Map();
  const commands = [];
  const services = {
    connection: { rpc: { handle: (channel, fn, opts) => { handled.set(channel, { fn, opts }); return async () => { handled.delete(channel); }; } } },
    commands: { register: (c) => { commands.push(c); return () => {}; } },
  };
  const disposers = [];
  const ctx = {
    logger: () => ({ info() {}, warn() {} }),
    inject: (names, fn) => fn({ ...Object.fromEntries(names.map((n) => [n, services[n]])), effect: (f) => disposers.push(f()) }),
  };
  return { ctx, handled, commands, dispose: () => Promise.all(disposers.map((d) => d?.())) };
}

test('off: every web call answers off, with the reason, and /resilience says the same', async () => {
  const f = fakeCtx();
  applyOff(/** @type {any} */ (f.ctx));
  const served = f.handled.get(RPC_CHANNEL);
  assert.ok(served, 'the web channel is served while off');
  assert.equal(served.opts.authority, 'loopback');
  for (const endpoint of ['status', 'candidates', 'set-backup', 'rows', 'report', 'validate']) {
    const r = await served.fn(endpoint, {});
    assert.deepEqual(r, OFF_ANSWER, endpoint);
  }
  // A success: the browser's caller throws on an error code outside the host's list.
  assert.equal(OFF_ANSWER.ok, true);
  assert.equal(OFF_ANSWER.value.off, true);
  assert.match(OFF_ANSWER.value.message, /enabled: false/);
  const text = (await f.commands[0].handler()).text;
  assert.equal(text, OFF_ANSWER.value.message);
  await f.dispose();
  assert.equal(f.handled.size, 0, 'the channel goes with the plugin');
});
