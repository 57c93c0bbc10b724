// The module is compiled once per process, from a synchronous read started
// first thing at activation (engine.js, compileModule).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compileModule } from '../engine.js';
import { ModuleInstance } from '../kernel.js';

test('one compile is shared by every activation, and it runs', async () => {
  assert.equal(compileModule(), compileModule(), 'one compile per process');
  const config = JSON.parse(new ModuleInstance(await compileModule()).call('configure', JSON.stringify({ chain: [{ provider: 'p', model: 'a' }] }))).config;
  assert.equal(config.failureThreshold, 3);
});

test('a module that cannot be read is a rejected compile, not a throw at activation', async () => {
  const { compileModule: fresh } = await import(`../engine.js?missing=${Date.now()}`);
  const compiling = fresh('/nonexistent/dsh-resilience.wasm');
  assert.ok(compiling instanceof Promise);
  await assert.rejects(compiling, /ENOENT/);
});
