// The plugin's dispose guard, through apply() with a minimal Cordis-shaped
// context: a health refresh in flight when the plugin is disposed must not
// launch a probe, re-arm the save, or write anything after the `stop` record.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { apply } from '../index.js';
import { usedStateDir } from './state-dirs.mjs';

const CHAIN = [{ provider: 'p', model: 'a' }, { provider: 'p', model: 'b' }];

function fakeContext(llm) {
  const disposers = [];
  return {
    logger: () => ({ warn() {}, info() {} }),
    on() {},
    emit() {},
    get: (name) => (name === 'llm' ? llm : undefined),
    inject() {},
    effect(fn) { disposers.push(fn()); },
    dispose: async () => { for (const d of disposers.reverse()) await d?.(); },
  };
}

test('a refresh in flight at dispose launches no probe and writes nothing after stop', async (t) => {
  const dir = await usedStateDir('dispose-');
  const streamed = [];
  const llm = { async *stream() { streamed.push(performance.now()); } };
  const ctx = fakeContext(llm);
  const alive = setInterval(() => {}, 1_000); // the plugin's own timers never keep a process alive
  t.after(() => clearInterval(alive));
  let parts;
  await apply(ctx, { chain: CHAIN, probes: true, stateDir: dir, healthRefreshMs: 100 }, { expose: (p) => { parts = p; } });
  const { health } = parts;

  // Hold the next refresh between its read and its merge, so that it is in
  // flight, for certain, while the plugin is disposed.
  // The plugin's own store (apply hands it to tests), not every HealthStore.
  const merge = health.mergeFile.bind(health);
  let entered, release;
  const inFlight = new Promise((r) => { entered = r; });
  const gate = new Promise((r) => { release = r; });
  health.mergeFile = async (...args) => {
    entered();
    await gate;
    return merge(...args);
  };
  // Another host's news: the primary open and due for a probe.
  const now = Date.now();
  await writeFile(join(dir, 'health.json'), JSON.stringify({ channels: [{ channel: CHAIN[0], state: 'open', failures: 1,
    opens: 1, openUntilMs: now - 1, lastCode: 'QUOTA', changedAtMs: now - 10 }] }));
  await inFlight;

  const disposeStarted = performance.now();
  const disposing = ctx.dispose();
  release();
  await disposing;
  const stoppedAt = (await stat(join(dir, 'audit.jsonl'))).mtimeMs;
  const healthAt = (await stat(join(dir, 'health.json'))).mtimeMs;
  await new Promise((r) => setTimeout(r, 300)); // anything late would happen now

  assert.deepEqual(streamed.filter((at) => at >= disposeStarted), [], 'no probe after dispose began');
  const audit = (await readFile(join(dir, 'audit.jsonl'), 'utf8')).trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(audit.some((a) => a.type === 'health-merged'), 'the refresh in flight did finish');
  assert.equal(audit.at(-1).type, 'stop', `stop is the last record: ${audit.map((a) => a.type)}`);
  assert.equal((await stat(join(dir, 'audit.jsonl'))).mtimeMs, stoppedAt, 'nothing appended after stop');
  assert.equal((await stat(join(dir, 'health.json'))).mtimeMs, healthAt, 'no save after stop');
});
