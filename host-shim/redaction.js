// @ts-check
// A provider's error text may echo a credential: the Authorization header it
// was sent, the key it refused. The module redacts such text as it comes in
// and redacts what the shim writes itself (policy/redact, engine.redact);
// this file hands the module the VALUES to take out: every credential the
// plugin can resolve. Their names come from the host's provider directory
// (each configurable provider's settings section names its key's variable,
// `apiKeyEnv`) and from the plugin's own references (shared.redis.passwordEnv,
// a webhook's secretEnv, quota.balances[].apiKeyEnv); their values from the
// host's credential service (secret.js). Asked at the bring-up and again
// whenever the host says a credential, a setting or its providers changed; a value once held
// stays held (a rotated key may still be echoed by a request sent before).
// Nothing here is written anywhere: the values go to the module only, which
// keeps them out of its snapshots and answers.
import { resolveSecret } from './secret.js';

/** @import { Context } from './host.js' */

/**
 * The credential variables the host's providers name: each configurable
 * provider's settings section (`settingsNs`, then `settingsPath`) and its
 * `apiKeyEnv`, defaults included (the settings service resolves them).
 * @param {any} llm - the host's llm service, if any.
 * @param {any} settings - the host's settings service, if any.
 * @returns {string[]}
 */
export function providerRefs(llm, settings) {
  /** @type {string[]} */
  const refs = [];
  let entries = [];
  try {
    entries = llm?.listConfigurableProviders?.() ?? [];
  } catch {
    return refs; // no directory: the own references and the shapes still apply
  }
  for (const entry of entries) {
    try {
      /** @type {any} */
      let section = settings?.get?.(entry.settingsNs);
      for (const key of entry.settingsPath ?? []) section = section?.[key];
      if (typeof section?.apiKeyEnv === 'string' && section.apiKeyEnv) refs.push(section.apiKeyEnv);
    } catch { /* a section that cannot be read names nothing */ }
  }
  return refs;
}

export class Secrets {
  /**
   * @param {object} o
   * @param {Context} o.ctx - the host's llm, settings and credential services.
   * @param {{setSecrets(values: string[]): void}} o.engine
   * @param {() => Array<string | null | undefined>} o.own - the plugin's own credential references.
   * @param {(ctx: Context, ref: string) => Promise<string | undefined>} [o.resolve]
   */
  constructor({ ctx, engine, own, resolve = resolveSecret }) {
    this.ctx = ctx;
    this.engine = engine;
    this.own = own;
    this.resolveRef = resolve;
    /** @type {Set<string>} */
    this.values = new Set();
    /** @type {Promise<void>} the first hand-over (or nothing to hand over) */
    this.held = Promise.resolve();
  }

  /** The names to resolve now. */
  refs() {
    const ctx = /** @type {any} */ (this.ctx);
    const names = [...providerRefs(ctx.get?.('llm'), ctx.get?.('settings')), ...this.own()];
    return [...new Set(names.filter(/** @returns {n is string} */ (n) => typeof n === 'string' && n !== ''))];
  }

  /**
   * Resolves every reference and hands the module what it did not hold yet.
   * Never rejects: a reference that does not resolve is skipped.
   * @returns {Promise<void>}
   */
  async refresh() {
    const found = await Promise.all(this.refs().map((ref) => this.resolveRef(this.ctx, ref).catch(() => undefined)));
    const before = this.values.size;
    for (const v of found) if (typeof v === 'string' && v.trim() !== '') this.values.add(v.trim());
    if (this.values.size !== before) this.engine.setSecrets([...this.values]);
  }

  /**
   * Hands the values over once `up` resolves, and again whenever the host
   * says a credential, a setting or its providers changed.
   * @param {Promise<unknown>} up - the engine's bring-up.
   */
  follow(up) {
    this.held = up.then(() => this.refresh(), () => {});
    const again = () => { this.held = this.held.then(() => this.refresh()); };
    const ctx = /** @type {{on(name: string, listener: () => void): unknown}} */ (/** @type {unknown} */ (this.ctx));
    ctx.on('credentials/updated', again);
    ctx.on('settings/updated', again);
    ctx.on('llm/adapters-updated', again); // a provider's adapter registers in its own activation, often after the bring-up
  }
}
