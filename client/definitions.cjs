// @ts-check
// The conversation definitions behind the inline rows (see rows.cjs): a
// state-only one for failed requests (no target, no view: the engine wants
// both or neither), one per request header, which makes a
// `dsh-resilience-row` node for a failover or a return, and one per turn that
// ended in an error (a give-up candidate). Every hook is
// guarded: a throw in a definition makes the session's history unreadable.
'use strict';

const { failureOf, failureState, routeOf, routeState, turnErrorOf, turnEndState, whereOf } = require('./rows.cjs');

const NODE_KIND = 'dsh-resilience-row';
const FAILURE = 'dsh-resilience-failure';
const ROUTE = 'dsh-resilience-route';
const TURN_END = 'dsh-resilience-turn-end';

function guard(fallback, f) {
  /** @this {unknown} */
  return function guarded() {
    try {
      return f.apply(this, arguments);
    } catch {
      return fallback;
    }
  };
}

const prevState = (reader, kind) => {
  try {
    const p = reader && reader.previous(kind);
    return p ? p.state : undefined;
  } catch {
    return undefined;
  }
};

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
];

module.exports = { definitions, NODE_KIND };
