// @ts-check
// The conversation definitions behind the inline rows (see rows.cjs): a
// state-only one for failed requests (no target, no view: the engine wants
// both or neither), one per request header, which makes a
// `dsh-resilience-row` node for a failover or a return, one per turn that
// ended in an error (a give-up candidate), and one per request's finish chunk
// (a hedge candidate: the row shows only when the audit holds a `hedge`
// record for that request). Every hook is
// guarded: a throw in a definition makes the session's history unreadable.
'use strict';

const { failureOf, failureState, hedgeState, isFinish, routeOf, routeState, turnErrorOf, turnEndState, whereOf } = require('./rows.cjs');

/**
 * @import { EngineLocation, FailureState, HedgeState, RouteState, RowKind, SessionEvent, TurnEndState } from './rows.cjs'
 */

const NODE_KIND = 'dsh-resilience-row';
const FAILURE = 'dsh-resilience-failure';
const ROUTE = 'dsh-resilience-route';
const TURN_END = 'dsh-resilience-turn-end';
const HEDGE = 'dsh-resilience-hedge';

/**
 * The state each definition keeps, by its kind.
 * @typedef {{[FAILURE]: FailureState, [ROUTE]: RouteState, [TURN_END]: TurnEndState, [HEDGE]: HedgeState}} States
 */

/**
 * What a row node carries: the row's kind and its node's state.
 * @typedef {{kind: RowKind, state: RouteState | TurnEndState | HedgeState}} RowData
 */

/**
 * What the conversation runtime hands a definition's hooks, as far as they read it.
 * @template S
 * @typedef {object} NodeContext
 * @property {string} key
 * @property {string} id
 * @property {S | undefined} state
 * @property {{location?: EngineLocation}} [start]
 */

/**
 * A matched event, and where the engine places it.
 * @typedef {{event: SessionEvent, location?: EngineLocation}} Match
 */

/**
 * The runtime's reader of earlier nodes: the latest node of a kind, if any.
 * @typedef {{previous(kind: string): {state?: unknown} | undefined}} Reader
 */

/**
 * A row node, as the chat renders it (rowview.cjs).
 * @typedef {object} ViewNode
 * @property {string} key
 * @property {typeof NODE_KIND} kind
 * @property {string} id
 * @property {'chat'} target
 * @property {number} anchorSeq
 * @property {EngineLocation} location
 * @property {'visible'} visibility
 * @property {RowData} data
 */

/**
 * A conversation definition (the runtime's node definition, as this plugin fills it in).
 * @template S
 * @typedef {object} Definition
 * @property {keyof States} kind
 * @property {'chat'} [target]
 * @property {(event: SessionEvent) => {id: string, role: 'start'} | null} match
 * @property {(context: NodeContext<S>, match: Match, reader: Reader) => S | undefined} start
 * @property {(context: NodeContext<S>) => S | undefined} update
 * @property {(context: NodeContext<S>) => ViewNode | null} [buildViewNode]
 */

/** @typedef {Definition<FailureState> | Definition<RouteState> | Definition<TurnEndState> | Definition<HedgeState>} AnyDefinition */

/**
 * `f`, answering `fallback` where it would throw.
 * @template {unknown[]} A
 * @template T, R
 * @param {R} fallback
 * @param {(...args: A) => T} f
 * @returns {(...args: A) => T | R}
 */
function guard(fallback, f) {
  /**
   * @this {unknown}
   * @param {A} args
   */
  return function guarded(...args) {
    try {
      return f.apply(this, args);
    } catch {
      return fallback;
    }
  };
}

/**
 * The state of the latest node of `kind`, if any.
 * @template {keyof States} K
 * @param {Reader | undefined} reader
 * @param {K} kind
 * @returns {States[K] | undefined}
 */
const prevState = (reader, kind) => {
  try {
    const p = reader && reader.previous(kind);
    return p ? /** @type {States[K] | undefined} */ (p.state) : undefined; // what this kind's own start returned
  } catch {
    return undefined;
  }
};

/**
 * @param {NodeContext<unknown>} context
 * @param {RowData} data
 * @returns {ViewNode}
 */
function node(context, data) {
  const s = data.state;
  return {
    key: context.key, kind: NODE_KIND, id: context.id, target: 'chat',
    anchorSeq: s.seq,
    location: (context.start && context.start.location) || { kind: 'unresolved' },
    visibility: 'visible',
    data,
  };
}

/** @type {[Definition<FailureState>, Definition<RouteState>, Definition<TurnEndState>, Definition<HedgeState>]} */
const definitions = [
  {
    kind: FAILURE,
    match: guard(null, (event) => (failureOf(event) ? { id: `f${event.seq}`, role: 'start' } : null)),
    start: guard(undefined, (context, match, reader) => failureState(match.event, prevState(reader, FAILURE), prevState(reader, ROUTE))),
    update: guard(undefined, (context) => context.state),
  },
  {
    kind: ROUTE,
    target: 'chat',
    match: guard(null, (event) => (routeOf(event) ? { id: `r${event.seq}`, role: 'start' } : null)),
    start: guard(undefined, (context, match, reader) => routeState(match.event, whereOf(match.location), prevState(reader, ROUTE), prevState(reader, FAILURE))),
    update: guard(undefined, (context) => context.state),
    buildViewNode: guard(null, (context) => (context.state && context.state.kind ? node(context, { kind: context.state.kind, state: context.state }) : null)),
  },
  {
    kind: TURN_END,
    target: 'chat',
    match: guard(null, (event) => (turnErrorOf(event) ? { id: `t${event.seq}`, role: 'start' } : null)),
    start: guard(undefined, (context, match, reader) => turnEndState(match.event, prevState(reader, FAILURE), prevState(reader, ROUTE))),
    update: guard(undefined, (context) => context.state),
    buildViewNode: guard(null, (context) => (context.state ? node(context, { kind: 'give-up', state: context.state }) : null)),
  },
  {
    kind: HEDGE,
    target: 'chat',
    match: guard(null, (event) => (isFinish(event) ? { id: `h${event.seq}`, role: 'start' } : null)),
    start: guard(undefined, (context, match, reader) => hedgeState(match.event, prevState(reader, ROUTE))),
    update: guard(undefined, (context) => context.state),
    buildViewNode: guard(null, (context) => (context.state ? node(context, { kind: 'hedge', state: context.state }) : null)),
  },
];

module.exports = { definitions, NODE_KIND };
