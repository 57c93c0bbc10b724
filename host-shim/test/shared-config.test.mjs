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
