package report

import (
	"slices"
	"strings"
)

// Sessions (agents). Each one's current attempt says where its failures go;
// its trouble, from its first failure to its next success (or the end of its
// turn), is the time an outage cost it; what it tried since its last success
// is what a give-up lists.

type agent struct {
	cur      *current
	trouble  *trouble
	tried    []Tried // each (channel, code) once, in order, with its count
	lastSeen int64
}

// current is an agent's request in flight.
type current struct {
	at       int64
	proposed opt[string]
	failed   bool
	cold     bool // sent before the module was up: its stream may never have been checked
}

type trouble struct {
	since     int64
	incidents []*incident // the outages it belongs to
}

func (tr *trouble) add(inc *incident) {
	if !slices.Contains(tr.incidents, inc) {
		tr.incidents = append(tr.incidents, inc)
	}
}

// agentOf is an agent's record, begun at its first mention.
func (a *Accumulator) agentOf(id string, t int64) *agent {
	ag := a.agents[id]
	if ag == nil {
		if len(a.agents) >= maxAgents {
			a.forgetIdle()
		}
		ag = &agent{}
		a.agents[id] = ag
	}
	ag.lastSeen = max(ag.lastSeen, t)
	return ag
}

// forgetIdle drops the quarter of the agents idle longest (limits.go).
func (a *Accumulator) forgetIdle() {
	seen := make([]int64, 0, len(a.agents))
	for _, ag := range a.agents {
		seen = append(seen, ag.lastSeen)
	}
	slices.Sort(seen)
	cut := seen[len(seen)/4]
	for id, ag := range a.agents {
		if ag.lastSeen <= cut {
			delete(a.agents, id)
		}
	}
}

// succeeded: an agent's attempt ended without an error, so its trouble, if
// any, is over at t.
func (ag *agent) succeeded(t int64) {
	if ag.trouble != nil {
		for _, inc := range ag.trouble.incidents {
			inc.lostMs += t - ag.trouble.since
		}
		ag.trouble = nil
	}
	ag.tried = ag.tried[:0]
}

func (ag *agent) try(channel, code string) {
	for i := range ag.tried {
		if ag.tried[i].Channel == channel && ag.tried[i].Code == code {
			ag.tried[i].Count++
			return
		}
	}
	if len(ag.tried) < maxTried {
		ag.tried = append(ag.tried, Tried{Channel: channel, Code: code, Count: 1})
	}
}

func (a *Accumulator) request(r *record) {
	ag := a.agentOf(r.agent.v, r.t)
	if ag.cur != nil && !ag.cur.failed {
		ag.succeeded(ag.cur.at)
	}
	ag.cur = &current{at: r.t, proposed: r.channel}
	// Routed round an open channel: affected, not failed; the stock host
	// would have sent it there.
	if inc := a.incidentFor(r.channel.v); inc != nil {
		inc.addSession(r.agent.v)
		inc.meet(attempt{agent: r.agent.v, at: r.t})
	}
}

// openSlackMs: a stream's open time is taken on the shim's monotonic clock
// and may read a little before the request event's wall time.
const openSlackMs = 50

func (a *Accumulator) requestError(log int, r *record) {
	ag := a.agentOf(r.agent.v, r.t)
	if ag.cur == nil {
		ag.cur = &current{at: r.t}
	}
	if ag.cur.failed {
		return // asked again after the host's retry plugin: the same attempt
	}
	ag.cur.failed = true
	// A request error names the provider, not the model: it goes on the
	// agent's own stream, the first unclaimed one of that provider opened
	// since its request; without one, on the channel its request proposed.
	key := r.provider + "/?"
	if p := ag.cur.proposed; p.ok && strings.HasPrefix(p.v, r.provider+"/") {
		key = p.v
	}
	s := a.streams.claim(log, r.provider, float64(ag.cur.at-openSlackMs), float64(r.t))
	if s != nil {
		key = s.key
	}
	c := a.channelOf(key)
	if s == nil && ag.cur.cold {
		// Sent cold and failed before the module came up: no check ever saw
		// its stream (one checked is claimed above, from when it went), yet
		// the provider did; its failure counts it.
		c.requests++
	}
	c.failures++
	code := "UNKNOWN"
	if r.code.ok {
		code = r.code.v
	}
	f := attempt{agent: r.agent.v, at: ag.cur.at, code: code, retryAfter: r.retryAfter}
	ag.try(key, code)
	if ag.trouble == nil {
		ag.trouble = &trouble{since: ag.cur.at}
	}
	if inc := a.incidentFor(key); inc != nil {
		inc.addFailure(f)
		ag.trouble.add(inc)
	} else if c != &a.overflow {
		a.pendingFor(key).add(f)
	}
}

func (a *Accumulator) settled(r *record) {
	ag := a.agentOf(r.agent.v, r.t)
	if ag.cur != nil && !ag.cur.failed {
		ag.succeeded(ag.cur.at)
	} else if ag.trouble != nil { // the turn ended on its failure: all of it was lost
		for _, inc := range ag.trouble.incidents {
			inc.lostMs += r.t - ag.trouble.since
		}
		ag.trouble = nil
	}
	ag.cur = nil
}

func (a *Accumulator) failover(r *record) {
	key := r.channel.v
	c := a.channelOf(key)
	if a.inWindow(r.t) && len(c.failovers) < maxListed {
		c.failovers = append(c.failovers, Failover{At: r.t, To: ptr(r.to), Code: ptr(r.code), Agent: ptr(r.agent)})
	}
	inc := a.incidentFor(key)
	if inc == nil {
		return
	}
	inc.failovers++
	if r.agent.v != "" {
		inc.addSession(r.agent.v)
		// The agent's trouble belongs to the outage that made it leave, even
		// if its failure came first.
		if ag := a.agents[r.agent.v]; ag != nil && ag.trouble != nil {
			ag.trouble.add(inc)
		}
	}
}

func (a *Accumulator) giveUp(r *record) {
	if !a.inWindow(r.t) {
		return
	}
	a.giveUpsIn++
	if len(a.giveUps) >= maxListed {
		return
	}
	g := GiveUp{At: r.t, Agent: ptr(r.agent), Channel: ptr(r.channel), Reason: ptr(r.reason), Code: ptr(r.code), Tried: []Tried{}}
	if ag := a.agents[r.agent.v]; r.agent.ok && ag != nil {
		g.Tried = slices.Clone(ag.tried)
	}
	a.giveUps = append(a.giveUps, g)
}
