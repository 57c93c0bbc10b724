// @ts-check
// What the host knows of the models the plugin may send a request to, told
// to the module: whether a reasoning effort survives a swap, whether the
// host can route a target at all (no adapter, a model the route does not
// list: never failed over to), and its window (`context.contextWindow`: a
// target too small for a request's context is skipped for it, policy/fit.go).
import { modelInfoEvent } from './events.js';

/** @import { Channel, Event } from './policy-types.js' */

/** How long the host's routes must be quiet before the targets are asked about again. */
const ADAPTERS_SETTLE_MS = 250;

export class ModelInfo {
  /**
   * @param {object} o
   * @param {import("@deepseek-ai/cordis").Context} o.ctx
   * @param {import('./engine.js').Engine} o.engine
   * @param {(event: Event) => unknown} o.step
   * @param {{window?: (channel: Channel, tokens: number | undefined) => void}} o.web - the picker's and the dock's windows.
   * @param {() => Channel | undefined} o.backup - the user's backup (the module's, as last set).
   * @param {AbortSignal} o.signal - the plugin's lifetime.
   */
  constructor({ ctx, engine, step, web, backup, signal }) {
    this.ctx = ctx;
    this.engine = engine;
    this.step = step;
    this.web = web;
    this.backup = backup;
    this.signal = signal;
    /** @type {NodeJS.Timeout | undefined} */
    this.settling = undefined;
  }

  /**
   * Asks the host about one target.
   * @param {any} llm - the host's llm service.
   * @param {Channel} target - a chain entry may carry its own settings: only its route is asked.
   */
  describe(llm, target) {
    const channel = { provider: target.provider, model: target.model };
    return llm.resolveModelInfo(channel.provider, channel.model, this.signal).then(
      /** @param {any} info */
      (info) => {
        const contextWindow = info?.context?.contextWindow;
        this.web.window?.(channel, contextWindow);
        this.step(modelInfoEvent(channel, { efforts: (info?.reasoning?.efforts ?? []).map((/** @type {any} */ e) => String(e.id)), contextWindow }));
      },
      (/** @type {any} */ error) => this.step(modelInfoEvent(channel, { error: error ?? {} })),
    );
  }

  /** Every target the module may route to: the chain, the pools' routes, the backup. */
  describeAll(/** @type {any} */ llm) {
    if (!this.engine.up || this.signal.aborted) return;
    const resolved = this.engine.resolved;
    const routes = resolved.pools.flatMap((p) => p.routes.map((r) => ({ provider: r.provider, model: r.model })));
    const backup = this.backup();
    [...resolved.chain, ...routes, ...(backup ? [backup] : [])].forEach((c) => this.describe(llm, c));
  }

  /**
   * Asks once the module is up and the host has loaded every plugin (its
   * loader settled): a provider's adapter registers in its own plugin's
   * activation, and a target asked about before that answers NO_ADAPTER,
   * which the module takes as "cannot be served" and routes the first
   * request away from it. Asks again once the routes settle after a change:
   * a host shutting down unregisters its adapters one by one, and a
   * settings change may swap a route out and in; neither should read as
   * "this target cannot be served".
   * @param {Promise<unknown>} up - the engine's bring-up.
   * @param {() => Promise<unknown>} booted - the host's loader settled.
   * @param {{warn: Function}} logger
   * @param {unknown} disposed - the bring-up's rejection when the plugin ended first (not worth a word).
   */
  follow(up, booted, logger, disposed) {
    this.ctx.inject(['llm'], (sub) => {
      // The sub may be inactive by then (its service is not its to give once
      // this callback returned): the plugin's own context asks.
      const first = sub.llm;
      Promise.all([up, booted()]).then(() => this.describeAll(this.ctx.get('llm') ?? first))
        .catch((e) => { if (e !== disposed) logger.warn('dsh-resilience: model info not asked: %s', e?.message ?? e); });
      sub.on('llm/adapters-updated', () => {
        clearTimeout(this.settling);
        this.settling = setTimeout(() => this.describeAll(sub.llm), ADAPTERS_SETTLE_MS);
        this.settling.unref?.();
      });
    });
  }

  dispose() {
    clearTimeout(this.settling);
  }
}
