// Failover and give-up records say where in the task they happened (turns.js,
// effects.js): the host's turn and step, the module's failover n of max.
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { carryOut } from '../effects.js';
import { compileModule, Engine as Policy } from '../engine.js';
import { Turns } from '../turns.js';

const A = { provider: 'p', model: 'a' };
const B = { provider: 'q', model: 'b' };
let compiled;
before(async () => { compiled = await compileModule(); });

// The failover count and its bound are the module's (plugin/codec/audit.go);
// the turn and step are the host's, added by the shim where the module asks.
test('a failover record carries turn, step and failover n/max; a give-up its count', () => {
  const turns = new Turns();
  turns.note({ agent: { id: 'a1' }, turn: 3, step: 1 });
  const audit = [];
  const env = {
    ctx: { emit() {} }, audit: { write: (r) => audit.push(r) }, logger: { info() {}, warn() {} },
    scheduleWake() {}, probe() {}, healthChanged() {}, where: (agent) => turns.of(agent),
  };
  const policy = new Policy(compiled, { chain: [A, B], probes: false, maxFailovers: 4 }, { info() {}, warn() {} });
  const step = (now, event) => carryOut(policy.decide(now, event)?.effects ?? [], env);
  const auth = (agent, provider) => ({ kind: 'request-error', agent, provider, failure: { code: 'AUTH', status: 401 }, phase: 'after-host', rand: 0 });
  const now = 1_800_000_000_000;
  step(now, { kind: 'request', agent: 'a1', proposed: A });
  step(now + 1, auth('a1', 'p'));
  step(now + 2, { kind: 'request', agent: 'a1', proposed: A });
  step(now + 3, auth('a1', 'q'));
  step(now + 4, { kind: 'request', agent: 'a2', proposed: B });
  step(now + 5, auth('a2', 'q'));
  const [failover, giveUp, other] = audit.filter((r) => r.type === 'failover' || r.type === 'give-up');
  assert.deepEqual([failover.type, failover.failovers, failover.maxFailovers, failover.turn, failover.step], ['failover', 1, 4, 3, 1]);
  assert.deepEqual([giveUp.type, giveUp.failovers, giveUp.maxFailovers, giveUp.turn], ['give-up', 1, 4, 3]);
  assert.equal(other.agent, 'a2');
  assert.equal('failovers' in other || 'turn' in other, false, 'nothing known: nothing said');
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
