// @ts-check
// Exhaustion marks outlive the process that learnt them: a spent allowance
// lasts hours, a headless host a minute. Each mark (a provider breaker opened
// by a quota failure) and each lift is kept in a file under the state
// directory, merged read-modify-write (per provider the newer change wins,
// expired marks are dropped), and re-applied at start (`restore-mark`).
import { readFile } from 'node:fs/promises';
import { writeJsonAtomic } from './atomic.js';

const changedAt = (r) => Math.max(r.markedAtMs ?? 0, r.liftedAtMs ?? 0);

export class QuotaMarks {
  constructor(path, audit) {
    this.path = path;
    this.audit = audit;
    this.records = new Map(); // provider -> {markedAtMs, untilMs, liftedAtMs?}
    this.queue = Promise.resolve();
  }

  async load() {
    await this.mergeFile();
  }

  /** The live marks, as `restore-mark` events. */
  restoreEvents(nowMs) {
    const out = [];
    for (const [provider, r] of this.records) {
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
      this.records.set(provider, { markedAtMs: nowMs, untilMs: fx.openUntilMs });
    } else if (fx.to === 'closed' && this.records.has(provider)) {
      this.records.set(provider, { ...this.records.get(provider), liftedAtMs: nowMs });
    } else {
      return;
    }
    this.save();
  }

  async mergeFile() {
    let doc;
    try {
      doc = JSON.parse(await readFile(this.path, 'utf8'));
    } catch (e) {
      if (e.code !== 'ENOENT') this.audit({ type: 'quota-marks-ignored', reason: String(e.message).slice(0, 200) });
      return;
    }
    for (const [provider, r] of Object.entries(doc?.marks ?? {})) {
      if (!r || !Number.isFinite(r.markedAtMs) || !Number.isFinite(r.untilMs)) continue;
      const mine = this.records.get(provider);
      if (!mine || changedAt(r) > changedAt(mine)) this.records.set(provider, r);
    }
  }

  save() {
    this.queue = this.queue.then(async () => {
      await this.mergeFile();
      const now = Date.now();
      for (const [provider, r] of this.records) if (r.untilMs <= now) this.records.delete(provider);
      await writeJsonAtomic(this.path, { marks: Object.fromEntries(this.records) });
    }).catch((e) => this.audit({ type: 'quota-marks-not-saved', reason: String(e?.message).slice(0, 200) }));
    return this.queue;
  }
}
