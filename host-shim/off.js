// @ts-check
// The master switch, `enabled: false` (dsh-model-failover's key): the plugin
// observes nothing and changes nothing. No policy module is compiled, no
// hook, service, projection, timer or file is installed, so every request,
// failure and tool call is the host's alone. Only `/resilience` answers, so a
// user who typed it learns why nothing happens. The rest of the row is kept
// as written and checked when the switch is turned back on.

const TEXT = 'dsh-resilience is off (enabled: false in its row): it observes nothing and changes nothing. '
  + 'Remove the key or set enabled: true to turn it on.';

/** @param {import("@deepseek-ai/cordis").Context} ctx */
export function applyOff(ctx) {
  ctx.logger('dsh-resilience').info('off (enabled: false): every request and failure is the host\'s alone');
  ctx.inject(['commands'], (sub) => {
    sub.effect(() => sub.commands.register({
      name: 'resilience',
      description: 'dsh-resilience: off (enabled: false)',
      input: { hint: '' },
      handler: async () => ({ kind: 'success', text: TEXT }),
    }), 'dsh-resilience: /resilience (off)');
  });
}
