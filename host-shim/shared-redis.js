// @ts-check
// Channel health shared across machines through Redis (docs/state.md "Shared
// health across machines"). Optional: only a config with `shared.redis` loads it, and only then
// is the Redis client imported, so the default install pulls in nothing.
//
// Layout: one hash per provider, `<keyPrefix>health:<provider>`, one field per
// model holding that channel's breaker record (the WIT `channel-health` JSON).
// A write is one Lua script, so the merge is atomic in Redis and field-level:
// a record replaces the field only when it wins the merge order (a higher
// `version`, ties to the more cautious record: policy/merge.go; never a
// wall-clock `changedAtMs`, which let a host 10 min behind never get its trip
// written), the key's expiry is pushed out to the record's (when the newest
// state in it stops mattering), and the record is published on
// `<keyPrefix>health` for every other host at once (no refresh lag). A host
// that starts reads every hash first.
//
// The module decides what to write (policy/shared.go): it knows what Redis
// holds (the records merged from it, the writes reported done) and answers
// the records that win over that, with their expiry; this file writes them
// and reports each one written. Redis is never on a request's path:
// decisions use the module's local state; the writes go out in the
// background, retried with backoff while Redis is away. An outage is audited
// once (`shared-unavailable`) and its end once (`shared-restored`); on return
// the host reads everything again and writes all it knows, so a Redis that
// lost its data (a restart without persistence) is refilled. The local file
// keeps working throughout.
import { CLIENT_PACKAGE } from './shared-config.js';
import { later } from './timers.js';

/** @import { ChannelHealth, SharedWrite } from './policy-types.js' */

/**
 * Lua: KEYS[1] the provider's hash; ARGV model, record JSON, (unused), expire-at ms, channel.
 * Its `wins` is the module's merge order (policy/merge.go remoteWins), which
 * Redis must apply itself, atomically, between writers on different
 * machines; a test drives both with the same records (shared-merge.test.mjs).
 */
export const MERGE = `
local function n(x) return tonumber(x) or 0 end
local function rank(r) if r.state == 'closed' then return 0 end return 1 end
local function wins(a, b)
  if n(a.version) ~= n(b.version) then return n(a.version) > n(b.version) end
  if rank(a) ~= rank(b) then return rank(a) > rank(b) end
  if n(a.opens) ~= n(b.opens) then return n(a.opens) > n(b.opens) end
  if n(a.failures) ~= n(b.failures) then return n(a.failures) > n(b.failures) end
  return rank(a) == 1 and n(a.openUntilMs) > n(b.openUntilMs)
end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  local ok, rec = pcall(cjson.decode, cur)
  if ok and type(rec) == 'table' and not wins(cjson.decode(ARGV[2]), rec) then return 0 end
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl = redis.call('PTTL', KEYS[1])
local exp = tonumber(ARGV[4])
if ttl < 0 or now + ttl < exp then redis.call('PEXPIREAT', KEYS[1], exp) end
redis.call('PUBLISH', ARGV[5], ARGV[2])
return 1
`;

export const CONNECT_TIMEOUT_MS = 1_000; // what a start may wait for the first read
const COMMAND_TIMEOUT_MS = 2_000;
const RETRY_MIN_MS = 250;
const RETRY_MAX_MS = 15_000;

export { CLIENT_PACKAGE };

/**
 * Imports the client, or explains how to get it.
 * @throws {Error} naming the config key, when the package is not installed.
 */
export async function loadRedisClient(load = () => import(CLIENT_PACKAGE)) {
  try {
    const mod = await load();
    const createClient = mod.createClient ?? mod.default?.createClient;
    if (typeof createClient !== 'function') throw new Error(`${CLIENT_PACKAGE} exports no createClient`);
    return createClient;
  } catch (e) {
    if (e?.code === 'ERR_MODULE_NOT_FOUND' || /Cannot find (package|module)/.test(String(e?.message))) {
      throw new Error(`dsh-resilience: config key "shared.redis": needs the Redis client package ${CLIENT_PACKAGE}, which is not installed; add it beside the plugin: dsh plugin --profile <profile> add ${CLIENT_PACKAGE}`);
    }
    throw e;
  }
}

/**
 * The promise's outcome, or a rejection naming `what` after ms.
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
const withTimeout = (promise, ms, what) => new Promise((resolve, reject) => {
  const t = later(() => reject(new Error(`${what}: no answer in ${ms} ms`)), ms).unref();
  promise.then((v) => { t.clear(); resolve(v); }, (e) => { t.clear(); reject(e); });
});

export class SharedHealth {
  /**
   * @param {object} o
   * @param {{url: string, keyPrefix?: string, tls?: boolean, ca?: string}} o.options - `shared.redis`.
   * @param {Function} o.createClient - the client package's createClient.
   * @param {() => Promise<string|undefined>} [o.password] - resolves passwordEnv; never logged.
   * @param {(forget: boolean) => SharedWrite[] | undefined} o.due - the module's answer: the records
   *   Redis needs; forget: Redis may have lost all it held.
   * @param {(records: ChannelHealth[]) => void} o.written - tells the module they were written.
   * @param {(records: ChannelHealth[], live: boolean) => void} o.merge - takes records read from Redis
   *   (the module notes it holds them); live when just published (news, received now), not when
   *   read from what Redis holds.
   * @param {(record: object) => void} o.audit
   */
  constructor({ options, createClient, password = async () => undefined, due, written, merge, audit }) {
    this.options = options;
    this.prefix = options.keyPrefix ?? 'dsh-resilience:';
    this.channel = `${this.prefix}health`;
    this.createClient = createClient;
    this.password = password;
    this.due = due;
    this.written = written;
    this.merge = merge;
    this.audit = audit;
    /** @type {SharedWrite[]} the module's last answer, less what was written since */
    this.queue = [];
    this.outage = false;
    /** @type {Promise<void> | undefined} */
    this.flushing = undefined;
    this.retryMs = RETRY_MIN_MS;
    /** @type {import('./timers.js').Later | undefined} */
    this.retryTimer = undefined;
    this.closed = false;
    this.writes = 0; // records written (newer than Redis held)
  }

  /**
   * Connects, subscribes and reads the current state, waiting at most
   * timeoutMs: a Redis that is away costs a start no more, and is joined later.
   */
  async start(timeoutMs = CONNECT_TIMEOUT_MS) {
    const socket = {
      connectTimeout: timeoutMs,
      ...(this.options.tls ? { tls: true } : {}),
      ...(this.options.ca ? { ca: this.options.ca } : {}), // shared.redis.ca, read at activation
      // Keep trying while the host runs: quickly at first, then every few seconds.
      /** @param {number} retries */
      reconnectStrategy: (retries) => (this.closed ? false : Math.min(100 * 2 ** retries, 5_000) * (0.5 + Math.random() / 2)),
    };
    const password = await this.password().catch(() => undefined);
    const options = { url: this.options.url, socket, disableOfflineQueue: true, ...(password ? { password } : {}) };
    try {
      this.client = this.createClient(options);
      this.sub = this.createClient(options);
    } catch (e) {
      // Options the client refuses (a URL its parser cannot read) are refused
      // for good: said once, with the client's reason, and nothing is tried
      // again (every later write once failed on the missing client instead).
      this.down(new Error(`the Redis client refused shared.redis (${String(e?.message ?? e).split(this.options.url).join('<url>').slice(0, 120)}); health is shared through the local file only`));
      this.closed = true;
      this.client?.destroy?.();
      return;
    }
    for (const c of [this.client, this.sub]) {
      c.on('error', (/** @type {unknown} */ e) => this.down(e));
    }
    this.client.on('ready', () => this.up());
    // The subscriber reconnects on its own schedule: what was published while
    // it was away is in the hashes, so it reads them again once it is back.
    this.sub.on('ready', () => {
      if (this.started && !this.closed) later(() => this.readAll().catch((e) => this.down(e)), 100).unref();
    });
    const connecting = (async () => {
      await Promise.all([this.client.connect(), this.sub.connect()]);
      await this.sub.subscribe(this.channel, (/** @type {unknown} */ message) => this.onMessage(message));
      await this.readAll();
    })();
    connecting.catch((e) => this.down(e)).finally(() => { this.started = true; });
    await withTimeout(connecting, timeoutMs, 'redis start').catch((e) => this.down(e));
  }

  /** Redis answers (again): the end of an outage is audited once, then resynced. */
  up() {
    if (!this.outage || this.closed) return;
    this.outage = false;
    this.audit({ type: 'shared-restored', store: 'redis' });
    this.resync();
  }

  /**
   * Redis failed or is away: audited once per outage.
   * @param {unknown} error
   */
  down(error) {
    if (this.outage || this.closed) return;
    this.outage = true;
    this.audit({ type: 'shared-unavailable', store: 'redis', reason: String(/** @type {{message?: unknown} | null | undefined} */ (error)?.message ?? error).slice(0, 200) });
  }

  /** After an outage: read what others wrote meanwhile, write all we know. */
  resync() {
    if (this.closed) return;
    this.readAll().catch((e) => this.down(e));
    this.sync(true); // Redis may have lost it all
  }

  /** Every hash under the prefix, merged into the module. */
  async readAll() {
    /** @type {ChannelHealth[]} */
    const records = [];
    let cursor = '0';
    const match = `${this.prefix.replace(/[*?[\]\\]/g, '\\$&')}health:*`;
    do {
      const [next, keys] = await withTimeout(this.client.sendCommand(['SCAN', cursor, 'MATCH', match, 'COUNT', '200']), COMMAND_TIMEOUT_MS, 'redis scan');
      cursor = String(next);
      for (const key of keys) {
        // Use HVALS, not HGETALL: its reply is a plain list in every protocol version.
        const values = await withTimeout(this.client.sendCommand(['HVALS', String(key)]), COMMAND_TIMEOUT_MS, 'redis read');
        for (const v of values) {
          const r = parse(v);
          if (r) records.push(r);
        }
      }
    } while (cursor !== '0');
    if (records.length > 0) this.merge(records, false); // stored state, of any age: read as dated
  }

  /** @param {unknown} message - a record another host published */
  onMessage(message) {
    const r = parse(message);
    if (!r || this.closed) return;
    this.merge([r], true); // published just now: an open it brings starts at its receipt
  }

  /**
   * Asks the module which records Redis needs (every one after an outage:
   * forget), and writes them. Its answer replaces what is queued: a record
   * not written yet is in it again, as the module knows it now.
   * @param {boolean} [forget]
   */
  sync(forget = false) {
    if (this.closed) return;
    const writes = this.due(forget);
    if (writes) this.queue = writes;
    this.flush();
  }

  flush() {
    if (this.flushing || this.queue.length === 0 || this.closed) return this.flushing;
    this.flushing = (async () => {
      try {
        while (this.queue.length > 0) {
          const w = this.queue[0];
          const r = w.record;
          const wrote = await withTimeout(this.client.sendCommand(['EVAL', MERGE, '1', `${this.prefix}health:${r.channel.provider}`,
            r.channel.model, JSON.stringify(r), String(r.changedAtMs ?? 0), String(w.expireAtMs), this.channel]), COMMAND_TIMEOUT_MS, 'redis write');
          if (Number(wrote) === 1) this.writes++;
          this.written([r]); // Redis holds it, or one that wins over it
          if (this.queue[0] === w) this.queue.shift(); // else a sync replaced the queue meanwhile
        }
        this.retryMs = RETRY_MIN_MS;
        this.up();
      } catch (e) {
        this.down(e);
        this.retryLater();
      } finally {
        this.flushing = undefined;
      }
    })();
    return this.flushing;
  }

  retryLater() {
    if (this.retryTimer || this.closed) return;
    const ms = this.retryMs * (0.5 + Math.random() / 2);
    this.retryMs = Math.min(this.retryMs * 2, RETRY_MAX_MS);
    this.retryTimer = later(() => { this.retryTimer = undefined; this.flush(); }, ms).unref();
  }

  /** Writes what is queued if Redis answers soon, then lets go of it. */
  async close(timeoutMs = 500) {
    if (this.closed) return;
    this.sync();
    if (this.flushing) await withTimeout(this.flushing, timeoutMs, 'redis final write').catch(() => {});
    this.closed = true;
    this.retryTimer?.clear();
    for (const c of [this.sub, this.client]) {
      try {
        c?.destroy ? c.destroy() : await c?.disconnect();
      } catch {
        // already gone
      }
    }
  }
}

/**
 * A record as Redis holds it, when it is one (its channel and change time checked; the module checks the rest).
 * @param {unknown} text
 * @returns {ChannelHealth | undefined}
 */
function parse(text) {
  try {
    const r = JSON.parse(String(text));
    return typeof r?.channel?.provider === 'string' && typeof r?.channel?.model === 'string' && Number.isFinite(r.changedAtMs) ? r : undefined;
  } catch {
    return undefined;
  }
}
