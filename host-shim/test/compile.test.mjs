import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { compileModule, WASM_PATH } from '../compile.js';
import { ModuleInstance } from '../kernel.js';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];

/** The module answers a configure and a request. */
function works(module) {
  const m = new ModuleInstance(module);
  assert.equal(JSON.parse(m.call('configure', JSON.stringify({ chain: CHAIN }))).config.chain.length, 2);
  const out = JSON.parse(m.call('decide', JSON.stringify({ nowMs: 1, event: { kind: 'request', agent: 'a', proposed: CHAIN[0] } })));
  assert.equal(out.verdict.kind, 'pass');
}

test('the module compiled and warmed on the worker runs here', async () => {
  const module = await compileModule();
  assert.ok(module instanceof WebAssembly.Module);
  works(module);
  assert.equal(await compileModule(), module, 'once per process');
});

test('a worker that cannot start, fails, answers nothing or hangs falls back to compiling here', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'dshr-compile-'));
  try {
    const throws = join(dir, 'throws.mjs');
    await writeFile(throws, "throw new Error('broken worker');\n");
    const silent = join(dir, 'silent.mjs');
    await writeFile(silent, "import { parentPort } from 'node:worker_threads';\nparentPort.postMessage('not a module');\n");
    const exits = join(dir, 'exits.mjs');
    await writeFile(exits, 'process.exit(3);\n');
    const hangs = join(dir, 'hangs.mjs');
    await writeFile(hangs, 'setInterval(() => {}, 1000);\n');
    for (const worker of [pathToFileURL(join(dir, 'missing.mjs')), pathToFileURL(throws), pathToFileURL(silent), pathToFileURL(exits), pathToFileURL(hangs)]) {
      const module = await compileModule(WASM_PATH, { worker, patienceMs: 200 });
      assert.ok(module instanceof WebAssembly.Module, String(worker));
      works(module);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
