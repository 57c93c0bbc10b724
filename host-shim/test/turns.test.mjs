// Failover and give-up records say where in the task they happened (turns.js,
// effects.js): the host's turn and step, the module's failover n of max.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';
import { Turns } from '../turns.js';

const A = { provider: 'p', model: 'a' };
const B = { provider: 'q', model: 'b' };

function env(turns, max = 4) {
  const audit = [];
  return {
    audit,
    env: {
      ctx: { emit() {} }, audit: { write: (r) => audit.push(r) }, logger: { info() {}, warn() {} },
      scheduleWake() {}, probe() {}, healthChanged() {}, where: (agent) => turns.of(agent), maxFailovers: () => max,
    },
  };
}

test('a failover record carries turn, step and failover n/max; a give-up its count', () => {
  const turns = new Turns();
  turns.note({ agent: { id: 'a1' }, turn: 3, step: 1 });
  const { audit, env: e } = env(turns);
  carryOut([
    { kind: 'failover', agent: 'a1', from: A, to: B, code: 'RATE_LIMIT', class: 'transient', failovers: 2 },
    { kind: 'give-up', agent: 'a1', channel: B, reason: 'budget-exhausted', code: 'RATE_LIMIT', failovers: 4 },
    { kind: 'give-up', agent: 'a2', channel: A, reason: 'no-routable-fallback', code: 'QUOTA' },
  ], e);
  assert.deepEqual([audit[0].failovers, audit[0].maxFailovers, audit[0].turn, audit[0].step], [2, 4, 3, 1]);
  assert.deepEqual([audit[1].failovers, audit[1].maxFailovers, audit[1].turn], [4, 4, 3]);
  assert.equal('failovers' in audit[2] || 'turn' in audit[2], false, 'nothing known: nothing said');
});

test('turns keep the last turn and step an agent was seen in, and forget the oldest first', () => {
  const turns = new Turns();
  turns.note({ agent: { id: 'a1' }, turn: 1, step: 1 });
  turns.note({ agent: { id: 'a1' }, turn: 'x' });
  assert.deepEqual(turns.of('a1'), {}, 'a payload without numbers says nothing');
  turns.note({ agent: { id: 'a1' }, turn: 2, step: 5 });
  assert.deepEqual(turns.of('a1'), { turn: 2, step: 5 });
  assert.deepEqual(turns.of('nobody'), {});
  for (let i = 0; i < 10_001; i++) turns.note({ agent: { id: `x${i}` }, turn: 1, step: 1 });
  assert.deepEqual(turns.of('a1'), {}, 'bounded');
});
