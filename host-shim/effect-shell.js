// @ts-check
// The shell's subscriber: the effects that ask this process to act (a
// wake timer, a probe, a held wait cut short, health saved and shared).
// The actions themselves are the Shell's (shell.js); this maps
// effect kinds to them, and nothing else.

/** @import { Channel, Effect } from './policy-types.js' */

/**
 * @typedef {object} ShellActions
 * @property {(atMs: number) => void} scheduleWake
 * @property {(channel: Channel) => void} probe
 * @property {() => void} healthChanged - a breaker or a provider's record changed: save and share it
 * @property {(agent: string) => void} [cutWait] - ends that agent's held wait now
 */

/**
 * @param {ShellActions} act
 * @returns {(fx: Effect) => void}
 */
export function shellSubscriber(act) {
  return (fx) => {
    switch (fx.kind) {
      case 'schedule-wake':
        act.scheduleWake(fx.atMs);
        break;
      case 'probe':
        act.probe(fx.channel);
        break;
      case 'wait-cut':
        act.cutWait?.(fx.agent);
        break;
      case 'circuit': // a provider's exhaustion mark is in its record: saved and shared with it
      case 'spill': // `from`'s burst grew, with no transition: the next process goes on from it
      case 'slow':
        act.healthChanged();
        break;
      default:
    }
  };
}
