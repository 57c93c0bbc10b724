// @ts-check
// The `shared` config key: where channel health is shared beyond one machine.
// Checked at activation like every key; an error names the full key path.
// Credentials are only ever a reference (passwordEnv, an env-style name the
// host's credential service resolves), never a value in the config.

const fail = (key, reason) => {
  throw new Error(`dsh-resilience: config key "${key}": ${reason}`);
};
const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

function known(v, path, keys) {
  if (!isObject(v)) fail(path, 'must be an object');
  for (const k of Object.keys(v)) if (!keys.includes(k)) fail(`${path}.${k}`, `unknown key (known: ${keys.join(', ')})`);
}

/**
 * @returns {{redis?: {url: string, keyPrefix: string, tls: boolean, passwordEnv?: string}}}
 * @throws {Error} naming the key and the reason.
 */
export function checkShared(v) {
  known(v, 'shared', ['redis']);
  if (v.redis === undefined) return {};
  const r = v.redis;
  known(r, 'shared.redis', ['url', 'keyPrefix', 'tls', 'passwordEnv']);
  if (typeof r.url !== 'string' || !/^rediss?:\/\/[^\s]+$/.test(r.url)) fail('shared.redis.url', 'must be a redis:// or rediss:// URL');
  if (/^rediss?:\/\/[^/@]*:[^/@]*@/.test(r.url)) fail('shared.redis.url', 'must not hold a password: name it with shared.redis.passwordEnv');
  if (r.keyPrefix !== undefined && (typeof r.keyPrefix !== 'string' || r.keyPrefix === '' || r.keyPrefix.length > 100)) {
    fail('shared.redis.keyPrefix', 'must be a non-empty string of at most 100 characters');
  }
  if (r.tls !== undefined && typeof r.tls !== 'boolean') fail('shared.redis.tls', 'must be a boolean');
  if (r.passwordEnv !== undefined && (typeof r.passwordEnv !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(r.passwordEnv))) {
    fail('shared.redis.passwordEnv', 'must be an environment variable name, e.g. DSH_REDIS_PASSWORD');
  }
  return {
    redis: {
      url: r.url,
      keyPrefix: r.keyPrefix ?? 'dsh-resilience:',
      tls: r.tls ?? r.url.startsWith('rediss://'),
      ...(r.passwordEnv ? { passwordEnv: r.passwordEnv } : {}),
    },
  };
}
