// Where each agent is in its task, as the host last said in an
// agent/request-error payload: its turn and step. The failover and give-up
// records carry them (with the module's failover count), so a reader can tell
// "failover 2/4 · turn 3 step 1" apart from a fresh turn's first failover.
// Host facts only: the module's own state stays the module's.

const MAX_AGENTS = 10_000; // agents come and go; the oldest are forgotten first

/** Where an agent is in its task. @typedef {{turn?: number, step?: number}} Where */

export class Turns {
  constructor() {
    /** @type {Map<string, Where>} agent id -> where it is, oldest first */
    this.byAgent = new Map();
  }

  /**
   * Notes the turn and step of a request-error payload.
   * @param {{agent?: {id?: unknown}, turn?: unknown, step?: unknown} | undefined} payload
   */
  note(payload) {
    const id = payload?.agent?.id;
    if (id === undefined || id === null) return;
    /** @type {Where} */
    const where = {};
    if (Number.isSafeInteger(payload?.turn)) where.turn = /** @type {number} */ (payload?.turn);
    if (Number.isSafeInteger(payload?.step)) where.step = /** @type {number} */ (payload?.step);
    const key = String(id);
    this.byAgent.delete(key); // re-inserted last: the map stays in age order
    this.byAgent.set(key, where);
    if (this.byAgent.size > MAX_AGENTS) this.byAgent.delete(/** @type {string} */ (this.byAgent.keys().next().value)); // the oldest
  }

  /**
   * `{turn, step}` as last noted for the agent, or `{}`.
   * @param {string} agent
   * @returns {Where}
   */
  of(agent) {
    return this.byAgent.get(String(agent)) ?? {};
  }
}
