// The module is compiled eagerly, off the main thread, with V8's lazy
// compilation turned off for that one compile (engine.js, compileEagerly).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { compileEagerly, compileModule, userChose, WASM_PATH } from '../engine.js';
import { ModuleInstance } from '../kernel.js';

const bytes = () => readFileSync(WASM_PATH);
const configures = (compiled) => JSON.parse(new ModuleInstance(compiled).call('configure', JSON.stringify({ chain: [{ provider: 'p', model: 'a' }] }))).config.failureThreshold;

test('an eagerly compiled module runs like any other, and one compile is shared by every activation', async () => {
  assert.equal(configures(await compileEagerly(bytes(), [])), 3);
  assert.equal(compileModule(), compileModule(), 'one compile per process');
  assert.equal(configures(await compileModule()), 3);
});

test('a user who set the flag either way keeps it: the compile is then a plain one', async () => {
  for (const [argv, chose] of [
    [[], false],
    [['--max-old-space-size=4096', '--import', 'x.mjs'], false],
    [['--no-wasm-lazy-compilation'], true],
    [['--wasm-lazy-compilation'], true],
    [['--max-old-space-size=4096', '--wasm_lazy_compilation'], true],
  ]) {
    assert.equal(userChose(argv), chose, argv.join(' '));
    assert.equal(configures(await compileEagerly(bytes(), argv)), 3, argv.join(' '));
  }
});

test('a module that cannot be read is a rejected compile, not a throw at activation', async () => {
  const { compileModule: fresh } = await import(`../engine.js?missing=${Date.now()}`);
  const compiling = fresh('/nonexistent/dsh-resilience.wasm');
  assert.ok(compiling instanceof Promise);
  await assert.rejects(compiling, /ENOENT/);
});
