// @ts-check
// compile.js's worker: compiles the module, runs it once through the paths
// every host takes early (bring-up, a request, failures that open a channel
// and a failover, a settle, a wake, a restore and a snapshot), so that V8
// has compiled those functions, and posts the module back. The instance
// here is thrown away; its answers are not looked at.
import { parentPort, workerData } from 'node:worker_threads';
import { ModuleInstance } from './kernel.js';
import { compileHere } from './compile.js';
import { modelInfoEvent, requestErrorEvent, requestEvent, settledEvent, wakeEvent } from './events.js';

const module = await compileHere(workerData.path);
try {
  warm(new ModuleInstance(module));
} catch {
  // A module that cannot run here will say so on the main thread, in context.
}
parentPort?.postMessage(module);

/** @param {ModuleInstance} m */
function warm(m) {
  const a = { provider: 'warm-a', model: 'm' };
  const b = { provider: 'warm-b', model: 'm' };
  const call = (name, value) => {
    try {
      m.call(name, JSON.stringify(value));
    } catch { /* a refusal warms the same code */ }
  };
  call('resolve', { chain: [a, b] });
  call('configure', { chain: [a, b], failureThreshold: 2 });
  call('restore', { nowMs: 1, channels: [] });
  const decide = (nowMs, event) => call('decide', { nowMs, event });
  const agent = { id: 'warm' };
  decide(1, modelInfoEvent(b, { contextWindow: 128000 }));
  decide(2, requestEvent({ agent }, a, 1000));
  for (let i = 0; i < 2; i++) {
    decide(3 + i, requestErrorEvent({ agent, provider: a.provider, failure: { code: 'SERVER', status: 500 } }, 'before-host', i));
  }
  decide(10, requestEvent({ agent }, a));
  decide(11, settledEvent(agent));
  decide(12, wakeEvent());
  call('snapshot', {});
  call('inspect', { nowMs: 13 });
}
