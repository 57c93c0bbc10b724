// @ts-check
// Exhaustion marks outlive the process that learnt them: a spent allowance
// lasts hours, a headless host a minute. Each mark (a provider breaker opened
// by a quota failure) and each lift is kept in a file under the state
// directory, one record per provider in the keyed store (keyed-store.js:
// locked, lossless across host processes; expired marks are dropped), and
// re-applied at start (`restore-mark`).
import { KeyedStore } from './keyed-store.js';

export class QuotaMarks {
  constructor(path, audit) {
    this.store = new KeyedStore(path, {
      records: {
        setAside: { type: 'quota-marks-set-aside' }, notRead: { type: 'quota-marks-ignored' },
        notSaved: { type: 'quota-marks-not-saved' }, saved: { type: 'quota-marks-saved' },
      },
      field: 'marks',
      audit,
      valid: (r) => Number.isFinite(r.markedAtMs) && Number.isFinite(r.untilMs),
      prune: (records) => {
        const now = Date.now();
        for (const [provider, r] of records) if (r.untilMs <= now) records.delete(provider);
      },
    });
  }

  get records() {
    return this.store.records;
  }

  get queue() {
    return this.store.queue;
  }

  load() {
    return this.store.load();
  }

  /** The live marks, as `restore-mark` events. */
  restoreEvents(nowMs) {
    const out = [];
    for (const [provider, r] of this.store.records) {
      if (r.untilMs > nowMs && !(r.liftedAtMs >= r.markedAtMs)) {
        out.push({ kind: 'restore-mark', provider, markedAtMs: r.markedAtMs, untilMs: r.untilMs });
      }
    }
    return out;
  }

  /** Records a provider breaker's change (effects.js `circuit`, model "*"). */
  note(fx, nowMs) {
    const provider = fx.channel.provider;
    if (fx.to === 'open' && fx.class === 'quota') {
      this.store.change(provider, () => ({ markedAtMs: nowMs, untilMs: fx.openUntilMs }));
    } else if (fx.to === 'closed' && this.store.get(provider)) {
      this.store.change(provider, (r) => r && { ...r, liftedAtMs: nowMs });
    }
  }
}
