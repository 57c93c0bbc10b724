import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkShared } from '../shared-config.js';

test('shared.redis: defaults filled in, tls from the scheme', () => {
  assert.deepEqual(checkShared({}), {});
  assert.deepEqual(checkShared({ redis: { url: 'redis://10.0.0.5:6379' } }),
    { redis: { url: 'redis://10.0.0.5:6379', keyPrefix: 'dsh-resilience:', tls: false } });
  assert.deepEqual(checkShared({ redis: { url: 'rediss://cache:6380/2', keyPrefix: 'team-a:', passwordEnv: 'DSH_REDIS_PASSWORD' } }),
    { redis: { url: 'rediss://cache:6380/2', keyPrefix: 'team-a:', tls: true, passwordEnv: 'DSH_REDIS_PASSWORD' } });
});

test('shared.redis: bad values stop activation naming the key', () => {
  for (const [value, key] of [
    [[], 'shared'],
    [{ redis: 'redis://x' }, 'shared.redis'],
    [{ mongo: {} }, 'shared.mongo'],
    [{ redis: {} }, 'shared.redis.url'],
    [{ redis: { url: 'http://x' } }, 'shared.redis.url'],
    [{ redis: { url: 'redis://user:secret@x:6379' } }, 'shared.redis.url'],
    [{ redis: { url: 'redis://x', keyPrefix: '' } }, 'shared.redis.keyPrefix'],
    [{ redis: { url: 'redis://x', tls: 'yes' } }, 'shared.redis.tls'],
    [{ redis: { url: 'redis://x', passwordEnv: 'not a name' } }, 'shared.redis.passwordEnv'],
    [{ redis: { url: 'redis://x', password: 'hunter2' } }, 'shared.redis.password'],
  ]) {
    assert.throws(() => checkShared(value), (e) => e.message.startsWith(`dsh-resilience: config key "${key}": `) && !e.message.includes('secret') && !e.message.includes('hunter2'), JSON.stringify(value));
  }
});

test('shared.redis: what the Redis client would refuse at boot is refused at activation, naming the key', async () => {
  for (const [redis, key, why] of [
    [{ url: 'redis://x:6379', tls: true }, 'shared.redis.tls', /true but the URL is redis:\/\//],
    [{ url: 'rediss://x:6380', tls: false }, 'shared.redis.tls', /false but the URL is rediss:\/\//],
    [{ url: 'redis://x:99999' }, 'shared.redis.url', /port must be a number from 1 to 65535/],
    [{ url: 'redis://x:0' }, 'shared.redis.url', /port/],
    [{ url: 'redis://x:' }, 'shared.redis.url', /port/],
    [{ url: 'redis://x:6379/not-a-db' }, 'shared.redis.url', /database index/],
    [{ url: 'redis://x:6379/99999999999' }, 'shared.redis.url', /database index/],
    [{ url: 'redis://x:6379/2/3' }, 'shared.redis.url', /database index/],
    [{ url: 'redis://SECRET@x:6379' }, 'shared.redis.url', /user name or password/],
    [{ url: 'redis://:SECRET@x:6379' }, 'shared.redis.url', /user name or password/],
    [{ url: 'redis://x:6379/0?password=SECRET' }, 'shared.redis.url', /query or fragment/],
    [{ url: 'redis://x:6379#SECRET' }, 'shared.redis.url', /query or fragment/],
    [{ url: 'redis://' }, 'shared.redis.url', /must name a host/],
    [{ url: 'redis://x:6379', ca: '/etc/hostname' }, 'shared.redis.ca', /needs TLS/],
    [{ url: 'rediss://x:6380', ca: '/nonexistent/ca.pem' }, 'shared.redis.ca', /cannot read \/nonexistent\/ca\.pem: ENOENT/],
    [{ url: 'rediss://x:6380', ca: 42 }, 'shared.redis.ca', /path of a PEM file/],
  ]) {
    assert.throws(() => checkShared({ redis }), (e) => e.message.startsWith(`dsh-resilience: config key "${key}": `) && why.test(e.message) && !e.message.includes('SECRET'), JSON.stringify(redis));
  }
});

test('shared.redis: good URLs pass; a ca file is read at activation and handed to the client', async () => {
  const { mkdtemp, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  for (const url of ['redis://x', 'redis://x/', 'redis://x:6379/15', 'redis://[::1]:6379', 'redis://10.0.0.5', 'rediss://cache.example:6380/0']) {
    assert.equal(checkShared({ redis: { url } }).redis.url, url);
  }
  assert.equal(checkShared({ redis: { url: 'rediss://x', tls: true } }).redis.tls, true);
  const dir = await mkdtemp(join(tmpdir(), 'ca-'));
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  await writeFile(join(dir, 'ca.pem'), pem);
  assert.equal(checkShared({ redis: { url: 'rediss://x:6380', ca: join(dir, 'ca.pem') } }).redis.ca, pem);
  await writeFile(join(dir, 'key.pem'), 'not a certificate');
  assert.throws(() => checkShared({ redis: { url: 'rediss://x', ca: join(dir, 'key.pem') } }), /config key "shared\.redis\.ca": .* holds no PEM certificate/);
});

test('shared.redis.url: what the Redis client cannot parse is refused naming the key, the URL not quoted', () => {
  // Both passed the check's own pattern; the client's createClient then threw
  // and the host ran with shared health off (issue #34).
  for (const url of ['redis://[127.0.0.1]:6379', 'redis://[:::::]', 'redis://[1:2:3:4:5:6:7:8:9]', 'rediss://[::1::2]:6380/1']) {
    assert.throws(() => checkShared({ redis: { url } }), (e) => e.message.startsWith('dsh-resilience: config key "shared.redis.url": the Redis client cannot parse it (Invalid URL)')
      && !e.message.includes(url.slice(url.indexOf('['))), url);
  }
});

test('shared.redis.url: read by the Redis client\'s own parser, found where the plugin loads the client; what passes, the client takes', async () => {
  const { join } = await import('node:path');
  const { pathToFileURL } = await import('node:url');
  const { redisClientDir, clientLoader } = await import('../../e2e/redis/redis-server.mjs');
  const { clientUrlParser } = await import('../shared-config.js');
  const from = pathToFileURL(join(redisClientDir(), 'package.json')).href;
  const parseUrl = clientUrlParser(from);
  // The client's parser, not the URL parser under it: only the client refuses another scheme.
  assert.throws(() => parseUrl('http://x'), /Protocol - http: - is not a valid Redis protocol/);
  assert.doesNotThrow(() => clientUrlParser(pathToFileURL('/nonexistent/x.js').href)('http://x'), 'no client: WHATWG URL');
  const { createClient } = await clientLoader()();
  let passed = 0;
  for (const url of ['redis://[127.0.0.1]:6379', 'redis://[:::::]', 'redis://[::1]:6379', 'redis://[::FFFF:1.2.3.4]', 'redis://x:06379',
    'redis://a..b', 'redis://x.', 'redis://-_.', 'redis://x:65535/2147483647', 'redis://[1:2:3:4:5:6:7:8]/3', 'redis://[::1', 'redis://[]',
    'redis://[v1.x]', 'redis://[::1]x', 'redis://x:1/0', 'rediss://h/', 'redis://1.2.3.4.5', 'redis://0x7f.1', 'redis://999.1.1.1']) {
    let checked = true;
    try {
      checkShared({ redis: { url } }, { parseUrl });
    } catch (e) {
      assert.match(e.message, /^dsh-resilience: config key "shared\.redis\.url": /, url);
      checked = false;
    }
    if (!checked) continue;
    passed++;
    // What passes the check, the client takes (connecting is another matter: not asked here).
    const client = createClient({ url, socket: { connectTimeout: 10, reconnectStrategy: false } });
    assert.equal(typeof client.connect, 'function', url);
  }
  assert.ok(passed >= 8, `${passed} passed`);
});
