// @ts-check
// The `shared` config key: where channel health is shared beyond one machine.
// Checked at activation like every key; an error names the full key path.
// Credentials are only ever a reference (passwordEnv, an env-style name the
// host's credential service resolves), never a value in the config.
//
// Every value that reaches the Redis client is checked here first: a URL the
// client refuses (port 99999, `/not-a-db` as the database, `tls: true` with
// `redis://`) otherwise stopped the host from booting with the client's own
// error and a 4.5 KB stack naming no key, and `tls: false` with `rediss://`
// was silently ignored. A private CA is a PEM file named by `ca`, read here,
// at activation (Node's NODE_EXTRA_CA_CERTS works too, for every TLS peer).
//
// The URL is then read by the Redis client's own parser (the one createClient
// runs), loaded from where the plugin loads the client: a check of its own
// passed `redis://[127.0.0.1]:6379` and `redis://[:::::]`, which the client
// cannot parse, and the host ran with shared health off, audited only as
// `Cannot read properties of undefined (reading 'sendCommand')`.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** The client package a user adds to their profile (docs/state.md, "Shared health across machines"). */
export const CLIENT_PACKAGE = '@redis/client';

/** @type {(key: string, reason: string) => never} */
const fail = (key, reason) => {
  const e = new Error(`dsh-resilience: config key "${key}": ${reason}`);
  e.stack = `Error: ${e.message}`; // a config error is the user's to fix: our frames say nothing to them
  throw e;
};
/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * Throws naming the key unless v is an object holding only `keys`.
 * @param {unknown} v
 * @param {string} path - the key's name, for the message
 * @param {string[]} keys
 * @returns {asserts v is Record<string, unknown>}
 */
function known(v, path, keys) {
  if (!isObject(v)) fail(path, 'must be an object');
  for (const k of Object.keys(v)) if (!keys.includes(k)) fail(`${path}.${k}`, `unknown key (known: ${keys.join(', ')})`);
}

/** Redis's own limit is its `databases` setting (16 by default); past 2^31 no server has one. */
const MAX_DB = 2 ** 31 - 1;
/** A CA bundle larger than this is not a CA bundle. */
const MAX_CA_BYTES = 1024 * 1024;

/** @typedef {(url: string) => unknown} UrlParser - throws when it cannot parse the URL */

/**
 * The Redis client's own URL parser (`RedisClient.parseURL`, what its
 * createClient runs on `url`), resolved from `from` as shared-redis.js
 * imports the client: from the plugin's own file, in the user's profile.
 * When the client is not installed, WHATWG URL, the parser the client's
 * own is built on (activation then stops on the missing package, naming it).
 * @param {string} [from] - the file the package is resolved from.
 * @returns {UrlParser}
 */
export function clientUrlParser(from = import.meta.url) {
  try {
    const mod = createRequire(from)(CLIENT_PACKAGE);
    const RedisClient = mod.RedisClient ?? mod.default?.RedisClient;
    if (typeof RedisClient?.parseURL === 'function') return (url) => RedisClient.parseURL(url);
  } catch {
    // not installed, or not loadable synchronously: the URL parser below it
  }
  return (url) => new URL(url);
}

/**
 * Checks the URL's parts itself, so no part of a refused URL is quoted back
 * (it may hold a secret), then has the client's parser read it.
 * @param {unknown} url
 * @param {UrlParser} parse
 * @returns {string} its scheme
 */
function checkUrl(url, parse) {
  const key = 'shared.redis.url';
  const m = typeof url === 'string' && /^(rediss?):\/\/([^/?#\s]*)([^?#\s]*)(\?[^#\s]*)?(#\S*)?$/.exec(url);
  if (!m) fail(key, 'must be a redis:// or rediss:// URL');
  const [, scheme, authority, path, query, fragment] = m;
  if (authority.includes('@')) fail(key, 'must not hold a user name or password: name the password with shared.redis.passwordEnv');
  if (query || fragment) fail(key, 'must not have a query or fragment (credentials and options are keys of shared.redis)');
  const hp = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+)(?::(\d*))?$/.exec(authority);
  if (!hp) fail(key, 'must name a host (a name, an IPv4 address or a [bracketed] IPv6 address)');
  if (hp[2] !== undefined && !(/^\d{1,5}$/.test(hp[2]) && Number(hp[2]) >= 1 && Number(hp[2]) <= 65535)) {
    fail(key, 'port must be a number from 1 to 65535');
  }
  if (path !== '' && path !== '/' && !(/^\/\d{1,10}$/.test(path) && Number(path.slice(1)) <= MAX_DB)) {
    fail(key, 'path must be empty or a database index (e.g. redis://host:6379/2)');
  }
  try {
    parse(/** @type {string} */ (url));
  } catch (e) {
    // The client's words (Node's URL parser says "Invalid URL"), never the URL itself.
    const why = String(e?.message ?? e).split(/** @type {string} */ (url)).join('<url>').slice(0, 200);
    fail(key, `the Redis client cannot parse it (${why}): e.g. a bracketed host must be an IPv6 address, redis://[::1]:6379`);
  }
  return scheme;
}

/**
 * The PEM text of the CA file at path; throws naming shared.redis.ca.
 * @param {unknown} path
 * @returns {string}
 */
function readCa(path) {
  const key = 'shared.redis.ca';
  if (typeof path !== 'string' || path === '') fail(key, 'must be the path of a PEM file holding the CA certificate(s)');
  /** @type {string} */
  let text;
  try {
    const buf = readFileSync(path);
    if (buf.length > MAX_CA_BYTES) fail(key, `${path}: larger than ${MAX_CA_BYTES} bytes, not a CA file`);
    text = buf.toString('utf8');
  } catch (e) {
    if (e.message.startsWith('dsh-resilience:')) throw e;
    fail(key, `cannot read ${path}: ${e.code ?? e.message}`);
  }
  if (!text.includes('-----BEGIN CERTIFICATE-----')) fail(key, `${path} holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return text;
}

/**
 * @param {unknown} v - the row's `shared` key.
 * @param {{parseUrl?: UrlParser}} [o] - parseUrl: the client's URL parser (a test's); found by clientUrlParser when absent.
 * @returns {{redis?: {url: string, keyPrefix: string, tls: boolean, passwordEnv?: string, ca?: string}}}
 * @throws {Error} naming the key and the reason.
 */
export function checkShared(v, { parseUrl } = {}) {
  known(v, 'shared', ['redis']);
  if (v.redis === undefined) return {};
  const r = v.redis;
  known(r, 'shared.redis', ['url', 'keyPrefix', 'tls', 'passwordEnv', 'ca']);
  const scheme = checkUrl(r.url, parseUrl ?? clientUrlParser());
  if (r.keyPrefix !== undefined && (typeof r.keyPrefix !== 'string' || r.keyPrefix === '' || r.keyPrefix.length > 100)) {
    fail('shared.redis.keyPrefix', 'must be a non-empty string of at most 100 characters');
  }
  if (r.tls !== undefined && typeof r.tls !== 'boolean') fail('shared.redis.tls', 'must be a boolean');
  if (r.tls === true && scheme === 'redis') fail('shared.redis.tls', 'is true but the URL is redis:// (plain): use rediss:// for TLS');
  if (r.tls === false && scheme === 'rediss') fail('shared.redis.tls', 'is false but the URL is rediss:// (always TLS): use redis:// for a plain connection');
  if (r.ca !== undefined && scheme !== 'rediss') fail('shared.redis.ca', 'needs TLS: use a rediss:// URL');
  if (r.passwordEnv !== undefined && (typeof r.passwordEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.passwordEnv))) {
    fail('shared.redis.passwordEnv', 'must be an environment variable name, e.g. DSH_REDIS_PASSWORD');
  }
  const ca = r.ca !== undefined ? readCa(r.ca) : undefined;
  return {
    redis: { // each key checked above
      url: /** @type {string} */ (r.url),
      keyPrefix: /** @type {string | undefined} */ (r.keyPrefix) ?? 'dsh-resilience:',
      tls: scheme === 'rediss',
      ...(r.passwordEnv ? { passwordEnv: /** @type {string} */ (r.passwordEnv) } : {}),
      ...(ca ? { ca } : {}),
    },
  };
}
