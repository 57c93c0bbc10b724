// The row's split into the shim's keys and the module's: a key named after
// a member of Object.prototype is an unknown key the module names, never a
// call into the prototype or a prototype swap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { splitConfig } from '../row.js';
import { compileModule, ConfigError, Engine } from '../engine.js';

const CHAIN = [{ provider: 'p', model: 'a' }];
const quiet = { warn() {}, info() {} };

test('prototype-named keys go to the module, which refuses each by name', async () => {
  const compiled = await compileModule();
  for (const key of ['toString', 'constructor', 'hasOwnProperty', 'valueOf', '__proto__', 'isPrototypeOf']) {
    const row = JSON.parse(`{"chain":${JSON.stringify(CHAIN)},${JSON.stringify(key)}:{"x":1}}`); // an own key, as the host's YAML reader makes it
    const { shim, policy } = splitConfig(row);
    assert.deepEqual(Object.keys(shim), [], key);
    assert.ok(Object.hasOwn(policy, key), `${key} is the module's to judge`);
    assert.throws(() => new Engine(compiled, policy, quiet), (e) => e instanceof ConfigError && e.message.includes(`"${key}"`), key);
  }
});

test('a shim key is still checked by its own rule', () => {
  assert.throws(() => splitConfig({ stateDir: 42 }), /config key "stateDir"/);
  assert.deepEqual({ ...splitConfig({ notice: false, chain: CHAIN }).shim }, { notice: false });
});
