package sim

import "fmt"

// simAgent is one agent as the host would run it: turns of model requests,
// the host's own retries, and the plugin's verdicts carried out.
type simAgent struct {
	id          string
	home        Channel
	gen         int  // bumped to drop the agent's scheduled events (cancel, dispose, restart)
	busy        bool // in a turn
	left        int  // requests left in the turn
	inFlight    bool
	waiting     bool // a wait verdict is running
	routed      Channel
	req         int64 // requests sent, for draws
	hostRetries int
	effort      bool
	// What the invariants need to know of it, since this instance last forgot it.
	routedHere bool             // this module instance routed its latest request
	failovers  int              // failovers since its last success
	proposed   map[Channel]bool // channels it proposed: its possible homes
	succeeded  bool             // its last request succeeded: the next Request credits it
	key        string           // for draws
	// recoverSince: its first failure since its last success (0: none);
	// held: its wait holds the turn because nothing it may use was routable,
	// and usableSince when the picture first saw one of them closed since.
	recoverSince, usableSince int64
	held                      bool
	// The routing worlds (route.go).
	web                  bool    // selects as the web host does: its pick, else its last route
	pick, header         Channel // the user's pick; the route its log last used
	lastProp             Channel // what the host proposed last
	pickTold             bool    // the module was told the pick (a proposal unlike the last one and its route)
	pickFailovers        int     // failovers since the pick was told
	savedHome, savedPick Channel // what the shim keeps for a restarted host
	needRestore          bool    // a new instance has not been told them yet
	homeBefore           Channel // savedHome at the last restart: the home the module said it left
	started              bool    // it sent a request before (ever)
	restartPending       bool    // no request since the last restart
	ctx                  int64   // its context in tokens (fit.go)
	inRetry              bool    // its next request retries the last (the same context)
	prevRoute            Channel // where its previous request went (fit.go)
}

func (r *runner) agent(id string) *simAgent {
	a := r.agents[id]
	if a == nil {
		a = &simAgent{id: id, proposed: map[Channel]bool{}, key: id, web: draw(id, 17)%2 == 0}
		r.agents[id] = a
	}
	return a
}

// forget resets what the checks know of the agent: the policy forgot it.
func (a *simAgent) forget() {
	a.routedHere, a.failovers, a.held, a.recoverSince = false, 0, false, 0
	clear(a.proposed)
}

func (r *runner) startTurn(op *Op) {
	a := r.agent(op.Agent)
	if a.busy {
		return
	}
	a.busy, a.left, a.home, a.hostRetries = true, op.N, r.s.Channels[op.Ch], 0
	a.effort = draw(a.key, int64(op.ID))%3 == 0
	r.send(a)
}

// send is agent/request: the host proposes the agent's home channel.
func (r *runner) send(a *simAgent) {
	a.waiting = false
	if a.succeeded {
		a.succeeded, a.failovers = false, 0 // this request credits the last one
	}
	prop := a.proposal()
	a.proposed[prop] = true
	r.restoreRoute(a)
	// A proposal unlike the last one and the route taken is the user's choice
	// (a headless agent's new turn on another channel reads the same way).
	choice := a.routedHere && a.routed != prop && a.lastProp != (Channel{}) && a.lastProp != prop
	pickNews := choice && a.pick != (Channel{}) && prop == a.pick
	first, afterRestart := !a.started, a.restartPending
	a.started, a.restartPending = true, false
	if !a.inRetry {
		r.grow(a) // a new request carries more context; a retry the same
	}
	prefs := r.beforeRoute(a)
	out, ok := r.decide("request", prop, a, func(b []byte) []byte {
		b = append(b, `{"kind":"request","agent":`...)
		b = appendStr(b, a.id)
		b = append(b, `,"proposed":`...)
		b = appendChannel(b, prop)
		if a.effort {
			b = append(b, `,"reasoningEffort":"high"`...)
		}
		b = r.contextField(b, a)
		return append(b, '}')
	})
	if !ok {
		return
	}
	target := prop
	switch out.Kind {
	case "pass":
	case "swap":
		target = out.Swap
	default:
		r.brk("verdict-legal", "request answered %q", out.Kind)
		return
	}
	r.checkRoute(a, target, prefs)
	r.checkFit(a, prop, target, out.Kind == "swap")
	a.prevRoute, a.inRetry = target, true
	r.checkRouteWorld(a, prop, target, first, pickNews, afterRestart)
	if target == a.savedHome {
		a.savedHome = Channel{} // home again (a module from before returned says nothing)
	}
	a.header, a.lastProp = target, prop
	r.budget(target.Provider).requests = append(r.budget(target.Provider).requests, r.now)
	a.inFlight, a.routed, a.routedHere = true, target, true
	a.req++
	ok2, hang, f := r.outcome(target, draw(a.key, a.req*7919+int64(a.gen)), false)
	if hang {
		f = failure{Code: "TIMEOUT", latencyMs: 180_000}
	}
	if cwe, refused := r.refused(target, a); refused {
		ok2, hang, f = false, false, cwe
	}
	r.push(item{at: r.now + f.latencyMs, kind: kResponse, agent: a, gen: a.gen, ok: ok2 && !hang, fail: f})
}

func (r *runner) respond(a *simAgent, ok bool, f failure) {
	a.inFlight = false
	if ok {
		a.recoverSince = 0
		a.inRetry = false
		a.left--
		a.hostRetries = 0
		a.succeeded = true
		if a.left > 0 {
			r.push(item{at: r.now + int64(draw(a.key, a.req)%5000), kind: kSend, agent: a, gen: a.gen})
			return
		}
		a.busy = false
		a.succeeded, a.failovers = false, 0
		r.decide("settled", a.routed, a, func(b []byte) []byte {
			b = append(b, `{"kind":"settled","agent":`...)
			b = appendStr(b, a.id)
			return append(b, '}')
		})
		return
	}
	r.fail(a, f, "before-host")
}

// fail delivers a failure of the agent's request and carries out the verdict.
func (r *runner) fail(a *simAgent, f failure, phase string) {
	r.res.Failures++
	if a.recoverSince == 0 && f.Code != "ABORTED" {
		a.recoverSince = r.now
	}
	out, ok := r.decide("request-error", a.routed, a, func(b []byte) []byte {
		b = append(b, `{"kind":"request-error","agent":`...)
		b = appendStr(b, a.id)
		b = append(b, `,"provider":`...)
		b = appendStr(b, a.routed.Provider)
		b = append(b, `,"failure":`...)
		b = f.append(b)
		b = append(b, `,"phase":"`...)
		b = append(b, phase...)
		b = append(b, `","hostRetry":`...)
		b = append(b, hostRetryJSON...)
		return fmt.Appendf(b, `,"rand":%d}`, draw(a.key, a.req*31+1)>>11)
	})
	if !ok {
		return
	}
	if f.Code == "ABORTED" || f.Code == "CONTEXT_WINDOW_EXCEEDED" && r.fit.on {
		// A cancel says nothing about the channel, nor does a context too
		// long for it (fit.go): the slot is free again.
		r.releaseHolder(a.id, a.routed)
	}
	r.checkAgentEffects(a, out)
	r.checkGiveUpHorizon(a, out)
	switch out.Kind {
	case "defer":
		if phase != "before-host" {
			r.brk("verdict-legal", "after-host failure deferred")
			return
		}
		if hostRetries(f.Code) && a.hostRetries < 2 {
			// dsh-llm-retry retries it: the request goes through agent/request again.
			a.hostRetries++
			delay := max(min(f.RetryAfterMs, 60_000), int64(1000)<<a.hostRetries)
			r.push(item{at: r.now + delay, kind: kSend, agent: a, gen: a.gen})
			return
		}
		r.fail(a, f, "after-host")
	case "retry":
		a.hostRetries = 0
		r.push(item{at: r.now, kind: kSend, agent: a, gen: a.gen})
	case "wait":
		a.hostRetries = 0
		a.waiting = true
		r.noteHeld(a)
		r.push(item{at: r.now + out.DelayMs, kind: kSend, agent: a, gen: a.gen})
	case "delegate":
		if out.Reason == "unknown-channel" && a.routedHere {
			r.brk("in-flight-forgotten", "agent %q, routed to %s by this instance, is unknown to it", a.id, a.routed)
		}
		// The failure goes back to the host: the turn ends.
		a.busy, a.hostRetries, a.failovers, a.recoverSince, a.inRetry = false, 0, 0, 0, false
		if f.Code == "CONTEXT_WINDOW_EXCEEDED" {
			a.ctx /= 4 // the host's compaction answers a window refusal
		}
	default:
		r.brk("verdict-legal", "request-error answered %q", out.Kind)
	}
}

func (r *runner) cancel(a *simAgent) {
	switch {
	case a.inFlight:
		// The request ends here: a later cancel must not fail it again (the
		// flood found one doing so, long after, for an agent the policy had
		// rightly forgotten as idle).
		a.gen++
		a.inFlight = false
		r.fail(a, failure{Code: "ABORTED", Message: "The operation was aborted"}, "before-host")
		a.busy = false
	case a.waiting:
		// A cancelled wait delegates; the module is not asked.
		a.gen++
		a.busy, a.waiting = false, false
	}
}

func (r *runner) dispose(a *simAgent) {
	a.gen++
	delete(r.agents, a.id)
	r.decide("disposed", Channel{}, nil, func(b []byte) []byte {
		b = append(b, `{"kind":"disposed","agent":`...)
		b = appendStr(b, a.id)
		return append(b, '}')
	})
	r.releaseHolder(a.id, a.routed)
}

// probeResult reports a probe's outcome to the module.
func (r *runner) probeResult(ch Channel, ok bool, f failure) {
	if !ok {
		r.res.Failures++
	}
	r.decide("probe-result", ch, nil, func(b []byte) []byte {
		b = append(b, `{"kind":"probe-result","channel":`...)
		b = appendChannel(b, ch)
		if ok {
			return append(b, `,"ok":true}`...)
		}
		b = append(b, `,"ok":false,"failure":`...)
		return append(f.append(b), '}')
	})
	if !ok && (f.Code == "ABORTED") {
		r.releaseHolder(probeOwner, ch)
	}
}
