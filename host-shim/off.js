// @ts-check
// The master switch, `enabled: false` (dsh-model-failover's key): the plugin
// observes nothing and changes nothing. No policy module is compiled, no
// hook, service, projection, timer or file is installed, so every request,
// failure and tool call is the host's alone. Only `/resilience` answers, so a
// user who typed it learns why nothing happens, and the web client's channel
// answers every call with an off answer: the client bundle loads whatever the row
// says, and without an answer its chip would poll a channel nobody serves and
// read "the host does not answer" instead of "off". The rest of the row is
// kept as written and checked when the switch is turned back on.

import { RPC_CHANNEL } from './web.js';

const TEXT = 'dsh-resilience is off (enabled: false in its row): it observes nothing and changes nothing. '
  + 'Remove the key or set enabled: true to turn it on.';

/**
 * What every web call gets while the plugin is off: the client says so, and
 * stops asking. It travels as a success: the browser's RPC caller parses an
 * error result against the host's own closed list of error codes and throws
 * on any other, so an `{ok: false, error: {code: 'OFF'}}` would reach the
 * client as a transport failure. shell.cjs `call` turns it back into OFF.
 */
export const OFF_ANSWER = Object.freeze({ ok: true, value: Object.freeze({ off: true, message: TEXT }) });

/** @param {import("@deepseek-ai/cordis").Context} ctx */
export function applyOff(ctx) {
  const logger = ctx.logger('dsh-resilience');
  logger.info('off (enabled: false): every request and failure is the host\'s alone');
  ctx.inject(['connection'], (/** @type {any} */ sub) => {
    try {
      const dispose = sub.connection.rpc.handle(RPC_CHANNEL, async () => OFF_ANSWER, { authority: 'loopback' });
      sub.effect(() => () => { dispose?.().catch?.(() => {}); });
    } catch (e) {
      logger.warn('dsh-resilience: the web channel is not served: %s', e?.message ?? e);
    }
  });
  ctx.inject(['commands'], (sub) => {
    sub.effect(() => sub.commands.register({
      name: 'resilience',
      description: 'dsh-resilience: off (enabled: false)',
      input: { hint: '' },
      handler: async () => ({ kind: 'success', text: TEXT }),
    }), 'dsh-resilience: /resilience (off)');
  });
}
