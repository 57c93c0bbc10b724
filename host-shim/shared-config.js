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
import { readFileSync } from 'node:fs';

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

/**
 * Checks the URL's parts itself, so no part of a refused URL is quoted back (it may hold a secret).
 * @param {unknown} url
 * @returns {string} its scheme
 */
function checkUrl(url) {
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
 * @returns {{redis?: {url: string, keyPrefix: string, tls: boolean, passwordEnv?: string, ca?: string}}}
 * @throws {Error} naming the key and the reason.
 */
export function checkShared(v) {
  known(v, 'shared', ['redis']);
  if (v.redis === undefined) return {};
  const r = v.redis;
  known(r, 'shared.redis', ['url', 'keyPrefix', 'tls', 'passwordEnv', 'ca']);
  const scheme = checkUrl(r.url);
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
