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
	heldListed                bool     // in runner.heldAgents
	heldMemo                  heldMemo // checkHeld's mask of its preferences (heldfast.go)
	// The session's quota switch as the user set it ("" default, on, off), and
	// whether this instance was told it (quotaworld.go).
	quotaSwitch string
	switchTold  bool
	// The routing worlds (route.go).
	web                  bool    // selects as the web host does: its pick, else its last route
	pick, header         Channel // the user's pick; the route its log last used
	lastProp             Channel // what the host proposed last
	pickTold             bool    // the module was told the pick (a proposal unlike the last one and its route)
	pickFailovers        int     // failovers since the pick was told
	savedHome, savedPick Channel // what the shim keeps for a restarted host
	needRestore          bool    // a new instance has not been told them yet
	homeBefore           Channel // savedHome at the last restart: the home the shim keeps (left, with no return said since)
	started              bool    // it sent a request before (ever)
	restartPending       bool    // no request since the last restart
	// What the module holds as the session's home and pick since it last
	// forgot the agent (policy/session.go noteProposal, restore-route), and
	// whether any of its requests proposed or went to a pool route (a session
	// that did may walk its pool instead of the chain): agentPrefs.
	modHome, modPick        Channel
	modStarted, modRestored bool
	touchedPool             bool
	ctx                     int64 // its context in tokens (fit.go)
	inRetry                 bool  // its next request retries the last (the same context)
	// refusedReq: its request was refused for its window (CONTEXT_WINDOW_EXCEEDED)
	// and is still being retried: the module then takes only a target whose
	// window it was told (fit.go fitsOther).
	refusedReq bool
	prevRoute  Channel // where its previous request went (fit.go)
	// pooledOn: the pool routes its requests went to since the module last
	// forgot it; one of them is its pool route (fit.go checkFit).
	pooledOn map[Channel]bool
}

func (r *runner) agent(id string) *simAgent {
	a := r.agents[id]
	if a == nil {
		a = &simAgent{id: id, proposed: map[Channel]bool{}, pooledOn: map[Channel]bool{}, key: id, web: draw(id, 17)%2 == 0}
		r.agents[id] = a
	}
	return a
}

// forget resets what the checks know of the agent: the policy forgot it.
func (a *simAgent) forget() {
	a.routedHere, a.failovers, a.held, a.recoverSince, a.refusedReq, a.switchTold = false, 0, false, 0, false, false
	a.modHome, a.modPick, a.modStarted, a.modRestored, a.touchedPool = Channel{}, Channel{}, false, false, false
	clear(a.proposed)
	clear(a.pooledOn)
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
	r.tellSwitch(a)
	// A proposal unlike the last one and the route taken is the user's choice
	// (a headless agent's new turn on another channel reads the same way).
	choice := a.routedHere && a.routed != prop && a.lastProp != (Channel{}) && a.lastProp != prop
	pickNews := choice && a.pick != (Channel{}) && prop == a.pick
	modFresh := !a.modStarted && !a.modRestored // a new session to the module
	switch {                                    // the module's own reading of the proposal (noteProposal)
	case choice:
		a.modHome, a.modPick = prop, prop
	case modFresh:
		a.modHome = prop
	}
	a.modStarted = true
	a.touchedPool = a.touchedPool || r.inPool(prop)
	first, afterRestart := !a.started, a.restartPending
	a.started, a.restartPending = true, false
	if !a.inRetry {
		r.grow(a) // a new request carries more context; a retry the same
		a.refusedReq = false
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
	if r.inPool(target) {
		a.pooledOn[target] = true
	}
	r.checkRouteWorld(a, prop, target, first, pickNews, afterRestart)
	// The saved home stays until the module says `returned` (noteRoutes), as
	// the shim keeps it (host-shim/quota.js effect): a request that lands on
	// it is no return when the module took it for none (first thing after a
	// restart, from the home the host proposed), and the module, holding
	// the shell's copy of the home, tells no session-route when the session
	// leaves it again. Dropped here, a restarted module was told no home
	// (seeds 13, 17 and 20, 24 h, 120 agents: view-survives-restart).
	if modFresh && target != prop {
		// A new session the module starts elsewhere may belong there from
		// now on: one whose proposal reads low starts on the first
		// preference with allowance, its home (policy onRequest), and goes
		// on there after that preference (a backup since cleared, seed 33)
		// is no longer one. The target is one of its homes; which one the
		// module took the checker cannot tell, so agentPrefs counts neither.
		a.proposed[target] = true
		a.modHome = Channel{}
	}
	a.header, a.lastProp = target, prop
	a.touchedPool = a.touchedPool || r.inPool(target)
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
	if f.Code == "CONTEXT_WINDOW_EXCEEDED" && a.ctx > 0 {
		a.refusedReq = true // before the step: its own failover already asks it (fit.go fitsOther)
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
	// The agent's request is over: a half-open slot it held is free, whether
	// the step reopened the breaker (which clears the holder) or not. The
	// module frees it without a transition when the failure says nothing
	// about the channel: a cancel, a permanent failure, an unservable one,
	// or a quota failure under the quota rules, where the provider's mark
	// says more (policy onQuotaFailure; seed 14, 120 agents, 6 h: an HTTP 402
	// on a half-open route, then its probe once the mark lifted).
	r.releaseHolder(a.id, a.routed)
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
	a.held = false // checkHeld drops it (a lookup per held agent per step cost more)
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
