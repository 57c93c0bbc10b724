// Compaction and session-title calls: asked about, sent off an open channel as
// a copy that passes through, everything else untouched (aux-route.js).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { routeAuxCalls, swappedCopy } from '../aux-route.js';
import { hostLlm } from '../host-llm.js';

function fakeHost(verdict) {
  const asked = [];
  const sent = [];
  const records = [];
  let listener;
  const ctx = {
    on: (name, fn) => { assert.equal(name, 'llm/stream'); listener = fn; },
    get: () => ({ stream: (o) => { sent.push(o); return listener(o, () => 'adapter'); } }),
  };
  return { ctx, asked, sent, records, decide: (e) => { asked.push(e); return verdict; }, call: (o) => listener(o, () => 'adapter') };
}

test('a compaction call on an open channel is sent to the module\'s target, once, and audited', async () => {
  const h = fakeHost({ kind: 'swap', provider: 'mock', model: 'mock-b', dropReasoningEffort: true });
  routeAuxCalls(h.ctx, h.decide, (r) => h.records.push(r));
  await hostLlm(); // settled: the listener answers at once (host-llm.test.mjs has the call before)
  const out = h.call(Object.freeze({ provider: 'p', model: 'a', purpose: 'compaction', reasoningEffort: 'high', messages: [] }));
  assert.equal(out, 'adapter', 'the copy went round the waterfall to the adapter');
  assert.deepEqual(h.asked, [{ kind: 'aux-request', proposed: { provider: 'p', model: 'a' }, purpose: 'compaction', reasoningEffort: 'high' }]);
  assert.deepEqual([h.sent.length, h.sent[0].provider, h.sent[0].model, 'reasoningEffort' in h.sent[0]], [1, 'mock', 'mock-b', false]);
  assert.deepEqual(h.records, [{ type: 'aux-routed', purpose: 'compaction', from: { provider: 'p', model: 'a' }, to: { provider: 'mock', model: 'mock-b' } }]);
});

test('probes, agent calls without a purpose, and a pass go where they were sent', async () => {
  const h = fakeHost({ kind: 'pass' });
  routeAuxCalls(h.ctx, h.decide, () => {});
  await hostLlm();
  assert.equal(h.call({ provider: 'p', model: 'a', maxTokens: 8 }), 'adapter');
  assert.equal(h.asked.length, 0, 'no purpose: not asked');
  assert.equal(h.call({ provider: 'p', model: 'a', purpose: 'session-title' }), 'adapter');
  assert.equal(h.sent.length, 0);
  assert.equal(swappedCopy({ provider: 'p' }, undefined), undefined, 'a failed module: no copy');
});
