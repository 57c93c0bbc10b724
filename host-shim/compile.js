// @ts-check
// The module is compiled, and its usual paths warmed, on a worker thread.
//
// The host boots on one thread, and every millisecond the plugin spends on
// it before the first model request delays that request by as much. V8
// compiles a WebAssembly function lazily, on the thread that first calls it:
// compiling the 4.5 MB module cost the main thread ~25 ms even through the
// async WebAssembly.compile, and the first instance's _initialize, configure
// and first decide ~40 ms more of compiling the functions they reach
// (RATIONALE.md, start-up). A compiled module posted from a worker shares its
// code with the main thread, the functions the worker ran included, so the
// main thread then only instantiates and runs.
// Anything wrong with the worker (none can start, it fails, answers no
// module, exits or hangs) falls back to compiling here: slower to start,
// never down. With one core the worker would only add its own start-up to
// the host's, so it is not used.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

export const WASM_PATH = fileURLToPath(new URL('../build/dsh-resilience.wasm', import.meta.url));
const WORKER = new URL('./compile-worker.js', import.meta.url);

/** A worker that has not answered by then is stopped, and the module compiled here. */
const WORKER_PATIENCE_MS = 10_000;

/** @type {Map<string, Promise<WebAssembly.Module>>} */
const compiling = new Map();

/**
 * Compiles the module once per process; every activation shares it. Started
 * at activation without being awaited there.
 * @param {string} [path]
 * @param {{worker?: URL | string, patienceMs?: number}} [options] - tests point `worker` elsewhere.
 * @returns {Promise<WebAssembly.Module>}
 */
export function compileModule(path = WASM_PATH, { worker = WORKER, patienceMs = WORKER_PATIENCE_MS } = {}) {
  const key = `${path}\n${worker}`;
  let module = compiling.get(key);
  if (!module) {
    module = availableParallelism() > 1 ? offThread(path, worker, patienceMs).catch(() => compileHere(path)) : compileHere(path);
    compiling.set(key, module);
  }
  return module;
}

/** @param {string} path */
export async function compileHere(path) {
  return WebAssembly.compile(await readFile(path));
}

/**
 * @param {string} path
 * @param {URL | string} entry
 * @param {number} patienceMs
 * @returns {Promise<WebAssembly.Module>}
 */
function offThread(path, entry, patienceMs) {
  return new Promise((resolve, reject) => {
    // Kept referenced while it works (~0.2 s): a process with nothing else
    // to do, the migrate check's, must not exit with the module pending.
    const worker = new Worker(entry, { workerData: { path } });
    const patience = setTimeout(() => { worker.terminate().catch(() => {}); }, patienceMs);
    patience.unref();
    const done = () => {
      clearTimeout(patience);
      worker.terminate().catch(() => {});
    };
    worker.once('message', (m) => {
      done();
      if (m instanceof WebAssembly.Module) resolve(m);
      else reject(new Error('the compile worker answered no module'));
    });
    worker.once('error', (e) => { done(); reject(e); });
    worker.once('exit', (code) => { done(); reject(new Error(`the compile worker exited (${code}) with no module`)); });
  });
}
