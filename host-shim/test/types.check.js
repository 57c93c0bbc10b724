// @ts-check
// Never run: read by `make typecheck` only. Each @ts-expect-error below marks
// a mistake the checker must catch at the module boundary. Should it stop
// catching one (tsconfig.json loosened, policy-types.d.ts stale or gone, the
// host's declarations not found), tsc reports that directive as unused and
// `make typecheck` fails: the check cannot pass by checking nothing.

/** @import { Effect, Event, Verdict } from '../policy-types.js' */
/** @import { Context } from '../host.js' */

/** @param {Effect} fx */
export function effectFields(fx) {
  // @ts-expect-error -- the stall effect's silence is `silenceMs`
  if (fx.kind === 'stall') return fx.silence;
  // @ts-expect-error -- there is no `quota-route` effect (it is `quota-routed`)
  if (fx.kind === 'quota-route') return 1;
  return 0;
}

/** @param {Verdict} v */
export function verdictFields(v) {
  // @ts-expect-error -- a tool-retry verdict's deadline is `deadlineMs`
  return v.kind === 'tool-retry' ? v.deadline : 0;
}

/** @type {Event[]} */
export const events = [
  { kind: 'wake' },
  { kind: 'set-backup', channel: null }, // an option may be null
  { kind: 'settled', agent: 'a1' },
  // @ts-expect-error -- an event kind the contract does not have
  { kind: 'wakeup' },
  // @ts-expect-error -- `agent` is required
  { kind: 'disposed' },
  // @ts-expect-error -- the phase is an enum: `before-host` or `after-host`
  { kind: 'request-error', agent: 'a1', provider: 'p', failure: { code: 'X' }, phase: 'before', rand: 0 },
];

/** @param {Context} ctx */
export function hostEvents(ctx) {
  ctx.on('agent/request-error', (_payload, next) => next());
  // @ts-expect-error -- not an event of the host (its declarations were found)
  ctx.on('agent/request-errors', () => {});
}
