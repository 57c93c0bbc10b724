package policy

import "strings"

// The agent table. A host may run thousands of agents at once (sub-agents,
// parallel tasks, a shared box), so every operation here is O(1): a map by id
// plus two intrusive lists, oldest first.
//
//   - busy: agents with a request the host will still report on: one in
//     flight, or one that failed and is being retried (by the host, after a
//     Defer, or by the policy, after a Wait or Retry). Forgetting one would
//     make its failure come back as unknown-channel and reach the user with no
//     failover, so a busy agent is never evicted while it is live.
//     They are in the order they became busy, not in the order they were
//     last seen: an agent's requests and failures follow one another while
//     it stays busy, and moving it to the back at each of them wrote to its
//     two neighbours, lines of two other agents that at 10^4 agents are
//     never in the cache (make bench, the 10^4 x 100 scale case: a tenth
//     of a request's time, 7 % of a failure's median). Eviction looks at the
//     front, and one seen since goes to the back (evict).
//   - idle: agents whose last request ended (settled, or handed back), least
//     recently seen first. What is left of them (the home channel) is cheap
//     to lose: a forgotten agent starts again from what the host proposes.
//     The oldest go first once there are more than maxIdleAgents.
//
// A host that never says Disposed therefore costs at most maxIdleAgents
// entries on top of the agents actually working.
const (
	maxIdleAgents = 1024
	// staleBusyMs: a busy agent silent for this long is a request whose end was
	// lost (its host process died mid-call); no model call or retry wait lasts
	// a day. Only such agents are evicted from the busy list, and only while
	// it holds more than maxBusyAgents.
	staleBusyMs   = 24 * 3600 * 1000
	maxBusyAgents = 1 << 16
	// busyTurns bounds how many live busy agents one eviction moves from the
	// front of the busy list to the back, looking for a stale one behind
	// them, so that each step stays O(1) when more than maxBusyAgents are
	// all alive.
	busyTurns = 2
)

// agent is what the policy needs to know of one agent between events.
//
// The fields are in the order the decisions read them: what every request
// and failure reads and writes first (with the pick and pool every routing
// reads), then what a request, a failover, a spill or a restart needs. At
// 10^4 agents none of them is in the cache when its next event comes, and
// each line a decision touches is a miss; the bookkeeping of a failure sits
// in the first six of its eleven lines, side by side.
type agent struct {
	id         string
	seen       int64      // last event time
	prev, next *agent     // neighbours in list
	list       *agentList // the list it is on

	routed   Channel // the channel its latest request went to
	sentAtMs int64   // when that request was routed
	inFlight bool    // that request has not failed (yet)
	pending  bool    // it failed and the host will come back: deferred, waiting or retrying
	// counted: the before-host question counted the latest failure (burst.go).
	counted bool
	// deferred: the latest failure was deferred to the host, so its
	// after-host question is about the same failure.
	deferred  bool
	restored  bool // home came from RestoreRoute and no request has been routed since
	hasOrigin bool // origin below is set
	failovers int  // failovers since its last success
	attempts  int  // same-channel retries and waits since its last success or failover
	// unknownRun: unknown failures in a row of the current model step (unknowncap.go).
	unknownRun int
	// recoveringSince is the time of the first failure since the agent's last
	// success; 0 when it is not recovering.
	recoveringSince int64
	// heldAt: position+1 in State.held while a wait holds its turn (hold.go),
	// until heldUntil; 0 when not held.
	heldAt    int
	heldUntil int64
	// need is what the current request asks of a target's window, tokens its
	// measured context (fit.go); skipNoted (below) the last too-small target reported.
	need   fitNeed
	tokens int64
	home   Channel // where the agent belongs: what it was on before any failover
	// tried: the channels failed on since the last success, for a give-up.
	tried []Tried
	// pick is the user's explicit model pick, honoured until they pick again or
	// choose a pool (session.go); lastProposed (below) is the host's last
	// proposal, to tell a pick from a fixed selection.
	pick Channel
	q    agentQuota // per-session quota settings and long-term wait (quota.go)

	// The spill (spill.go): failures in a row of the current request on
	// burstCh; the channel it spilled to, and the one its attempts avoid.
	burstN                      int
	burstCh, spillFrom, spillTo Channel
	skipNoted                   Channel
	lastProposed                Channel
	// savedHome and savedPick are what the shell holds for a restarted host.
	savedHome, savedPick Channel
	// origin is the failure that made the agent leave home, kept until its
	// next success or give-up: what the host gets back when no target is left.
	origin Failure
	// hedge is the request's hedge in flight (hedge.go).
	hedge hedgeRun
	// wonFrom and wonTo: a won hedge moved the session from wonFrom to wonTo,
	// which the host does not know (its header still names wonFrom). With
	// recovery stay the host's wonFrom means wonTo until it proposes another.
	wonFrom, wonTo Channel
	// gaveUp is its last give-up, until its next request: the chip shows
	// it (view.go), so the shell keeps no copy.
	gaveUp *GaveUp
}

// forgetRecovery ends a recovery: after a success, or once the failure went back to the host.
func (a *agent) forgetRecovery() {
	a.failovers, a.attempts, a.recoveringSince, a.unknownRun = 0, 0, 0, 0
	a.origin, a.hasOrigin = Failure{}, false
	a.tried = nil
}

// maxTried bounds a give-up's list of channels tried: a chain longer than
// this is cut, the latest kept.
const maxTried = 16

// noteTried records a failure on ch with code for the give-up's list.
func (a *agent) noteTried(ch Channel, code string) {
	for i := range a.tried {
		if a.tried[i].Channel == ch {
			a.tried[i].Code = code
			return
		}
	}
	if len(a.tried) == maxTried {
		a.tried = append(a.tried[:0:0], a.tried[1:]...)
	}
	a.tried = append(a.tried, Tried{Channel: ch, Code: code})
}

// busy reports whether the host will still report on the agent's request.
func (a *agent) busy() bool { return a.inFlight || a.pending }

// agentList is a doubly linked list, oldest first.
type agentList struct {
	head, tail *agent
	n          int
}

func (l *agentList) push(a *agent) {
	a.list, a.prev, a.next = l, l.tail, nil
	if l.tail != nil {
		l.tail.next = a
	} else {
		l.head = a
	}
	l.tail = a
	l.n++
}

func (l *agentList) unlink(a *agent) {
	if a.prev != nil {
		a.prev.next = a.next
	} else {
		l.head = a.next
	}
	if a.next != nil {
		a.next.prev = a.prev
	} else {
		l.tail = a.prev
	}
	a.prev, a.next, a.list = nil, nil, nil
	l.n--
}

type agentTable struct {
	byID       map[string]*agent
	busy, idle agentList
}

func newAgentTable() agentTable { return agentTable{byID: map[string]*agent{}} }

// Agents is how many agents the state holds: busy ones, and up to
// maxIdleAgents idle ones.
func (s *State) Agents() int { return s.agents.len() }

// len is how many agents the table holds.
func (t *agentTable) len() int { return len(t.byID) }

// lookup returns the agent, or nil; it changes nothing.
func (t *agentTable) lookup(id string) *agent { return t.byID[id] }

// get returns the agent, creating it, and marks it seen now.
func (t *agentTable) get(id string, now int64) *agent {
	a := t.byID[id]
	if a == nil {
		id = strings.Clone(id) // not the decoded input it was sliced from
		a = &agent{id: id}
		t.byID[id] = a
		t.idle.push(a)
		t.evict(now)
	}
	a.seen = now
	return a
}

// place files the agent on the list its state calls for: at the back of the
// idle list, or of the busy list when it becomes busy (one already busy
// stays where it is). Every handler that touched an agent calls it last.
func (t *agentTable) place(a *agent) {
	if a.list == &t.busy && a.busy() {
		t.evict(a.seen)
		return
	}
	if a.list != nil {
		a.list.unlink(a)
	}
	if a.busy() {
		t.busy.push(a)
	} else {
		t.idle.push(a)
	}
	t.evict(a.seen)
}

// evict forgets the oldest idle agents beyond maxIdleAgents, and busy agents
// only when they are both beyond maxBusyAgents and stale. The busy list's
// front is the agent busy the longest, which may have been seen since: such
// a one goes to the back, a few per call, so a stale one behind it comes
// to the front in turn.
func (t *agentTable) evict(now int64) {
	for t.idle.n > maxIdleAgents {
		t.remove(t.idle.head)
	}
	for turns := 0; t.busy.n > maxBusyAgents && turns < busyTurns; {
		h := t.busy.head
		if now-h.seen >= staleBusyMs {
			t.remove(h)
			continue
		}
		t.busy.unlink(h)
		t.busy.push(h)
		turns++
	}
}

func (t *agentTable) remove(a *agent) {
	a.list.unlink(a)
	delete(t.byID, a.id)
}

// onDisposed: the agent went away; it gives back any probe slot it held.
func (s *State) onDisposed(e Disposed, fx *[]Effect) {
	if a := s.agents.lookup(e.Agent); a != nil {
		if c := s.circuits[a.routed]; c != nil {
			c.release(e.Agent)
			s.releaseSlowProbe(c, e.Agent, fx) // slow.go
		}
		s.unhold(a)
		s.agents.remove(a)
	}
}
