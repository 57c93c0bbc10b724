package sim

import "math"

// Two invariants about holding a turn (issue #17): a give-up for taking too
// long must not come while a channel the agent may use is back in time, and a
// turn held because nothing was usable must not stay held once something is.

const (
	// horizonSlackMs: the picture of a half-open slot can lag the module's by
	// a probe's round trip; a channel back within this much of the deadline is
	// not counted against a give-up.
	horizonSlackMs = 1000
	// heldSlackMs: how long a held turn may stay held after a channel it may
	// use is closed. The module cuts the wait in the step that closes it.
	heldSlackMs = 5000
)

// agentPrefs are the channels the module may route the agent's next request
// to, as the module orders them (policy preferences): first the channel it is
// on (under "stay"), else the user's pick, else its home, as the module reads
// them from the proposals (modPick, modHome); then the backup; then the chain,
// or, for a pick a pool holds, that pool. A session on a pool route walks its
// pool instead of the chain (policy poolPreferences), and which of the two an
// agent that touched a pool route walks the checker cannot always tell (a
// quota failure on a pool route reached along the chain puts it into the
// pool): for it only what both orders hold counts. Issue #17, seed 1: a pooled
// session gave up while the chain's primary, not in its pool, was back; that
// was right, the pool keeps sessions off the chain's accounts.
func (r *runner) agentPrefs(a *simAgent) []Channel {
	prefs, _ := r.agentPrefsOwn(a)
	return prefs
}

// agentPrefsOwn is agentPrefs and the one of them the module holds as the
// agent's own channel (zero: none). Only the own channel is let off the told
// window (policy walk: the first preference, where only a refusal counts).
// When the checker does not know the module's first preference (a new
// session the module started elsewhere, agent.go send; a pooled session's
// first outside its pool), the list starts with the backup or the chain,
// which the module holds to the told window: seeds 15 and 19 (24 h, 120
// agents) read the backup, or the chain's primary, as the agent's own and
// called a give-up wrong while its context was too big for either.
func (r *runner) agentPrefsOwn(a *simAgent) (prefs []Channel, own Channel) {
	first := a.modHome
	switch {
	case r.cfg.stay && a.routed != (Channel{}):
		first = a.routed
	case a.modPick != (Channel{}):
		first = a.modPick
	}
	var out []Channel
	if first != (Channel{}) { // zero: no request since the module forgot the agent
		out, own = append(out, first), first
	}
	if r.backup != nil {
		out = append(out, *r.backup)
	}
	switch {
	case len(r.cfg.pools) == 0:
		return append(out, r.cfg.chain...), own
	case a.modPick != (Channel{}):
		if p := r.poolOf(a.modPick); p != nil && !switchOff(a) {
			return append(out, p...), own
		}
		return append(out, r.cfg.chain...), own
	case !a.touchedPool:
		return append(out, r.cfg.chain...), own
	}
	if len(out) > 0 && out[0] == first && !r.inPool(first) { // a pooled session's first is its pool route
		out = out[1:]
	}
	// The module's first for a pooled session is the pool route it is on
	// (policy poolPreferences), not its home, and which route that is the
	// checker cannot tell: none is let off the told window. Seed 10 (24 h,
	// 120 agents): a-63, home my-openai-route|claude/sonnet-4.5 (a pool
	// route, restored after a restart), on pool route local|模型-β, gave up
	// rightly while its home, held to its told window, was too small.
	own = Channel{}
	if switchOff(a) {
		return append(out, r.cfg.chain...), own
	}
	for _, ch := range r.cfg.chain {
		if r.inPool(ch) {
			out = append(out, ch)
		}
	}
	return out, own
}

// switchOff: the agent's quota switch is off, and the module was told. No
// other route of its pool stands in for the one it is on, whether it picked
// the pool or walked into it: the engine's own order follows (policy
// poolPreferences, routingPool). Seed 16 (4 h, 40 agents): 子代理-18, its
// switch off and its pick a pool route, its home's provider spent for an
// hour, gave up rightly while a pool route it may not be moved to was back
// within its recovery time.
func switchOff(a *simAgent) bool { return a.quotaSwitch == "off" && a.switchTold }

// agentOwn is the agent's own channel as agentPrefs puts it first, zero when
// the checker cannot tell it. Only it is spared the declared-window rule
// (fit.go fitsOwn): the first of agentPrefs is not always the agent's own.
// Issue #17, seed 10 (120 agents, 24 h): a new session the module started
// off its proposal (a fit skip) has no home the checker can name, so the
// backup came first and was taken as the agent's own, fitting a 325k context
// into its 200k window; checkHeld called the turn held while its backup was
// usable, where the module rightly kept the request off it.
//
// A pooled session's own channel is its pool route (policy poolPreferences),
// which a quota wait moves silently (policy enterWait: the first route that
// can hold the request), so the checker cannot name it: none is spared.
// Issue #17, seed 14 (120 agents, 24 h, 22h03m): a 194k session proposing its
// 200k home waited on the pool's 1M route, its pool route from then on; the
// home closed and the checker, taking the home as its own, called the turn
// held while usable, where the module rightly kept it off a window too small.
func (r *runner) agentOwn(a *simAgent) Channel {
	_, own := r.agentPrefsOwn(a)
	return own
}

// inPool reports whether a pool holds ch.
func (r *runner) inPool(ch Channel) bool {
	for _, p := range r.cfg.pools {
		for _, c := range p {
			if c == ch {
				return true
			}
		}
	}
	return false
}

// backAt is when the picture says ch next lets a request through.
func (r *runner) backAt(ch Channel, agent string) int64 {
	at := r.now
	if p := r.track[providerOf(ch)]; p != nil && p.state == "open" {
		at = max(at, p.openUntil)
	}
	if b := r.track[ch]; b != nil {
		switch b.state {
		case "open":
			at = max(at, b.openUntil)
		case "half-open":
			if b.holder != "" && b.holder != agent && r.now-b.holderSince < probeLeaseMs {
				at = max(at, b.holderSince+probeLeaseMs)
			}
		}
	}
	return at
}

// checkGiveUpHorizon: a recovery-timeout give-up is only right when every
// channel the agent may use comes back after its giveUpAfterMs. The agent's
// recovery is counted from its first failure since its last success, never
// later than the module counts it, so the deadline here is never later.
func (r *runner) checkGiveUpHorizon(a *simAgent, out Output) {
	for _, fx := range out.Effects {
		if fx.Kind != "give-up" || fx.Agent != a.id || fx.Reason != "recovery-timeout" || a.recoverSince == 0 {
			continue
		}
		deadline := a.recoverSince + r.cfg.giveUpAfterMs
		prefs, own := r.agentPrefsOwn(a)
		for _, ch := range prefs {
			if r.unavailable(ch) {
				continue // the host may have said it cannot serve it: the module skips it
			}
			if at := r.backAt(ch, a.id); at+horizonSlackMs <= deadline && r.fits(a, ch, ch == own) { // fit.go
				r.brk("give-up-horizon", "agent %q gave up (recovery-timeout) though %s is back at %s, before its deadline %s",
					a.id, ch, fmtVirtual(at-Epoch), fmtVirtual(deadline-Epoch))
				return
			}
		}
	}
}

// noteHeld marks a wait verdict that holds the turn because nothing it may
// use is routable (a failover wait, a long-term quota wait), as opposed to a
// backoff on a channel that is still closed.
func (r *runner) noteHeld(a *simAgent) {
	a.held, a.usableSince = true, 0
	for _, ch := range r.agentPrefs(a) {
		if !r.avoid(ch, a.id) {
			a.held = false
			return
		}
	}
	r.heldDirty = true
	if !a.heldListed {
		a.heldListed = true
		r.heldAgents = append(r.heldAgents, a)
	}
}

// checkHeld: no turn stays held while a channel it may use is closed.
// It runs after every step: a scan of every agent there was half the
// bench-day's time. So it walks only the agents noteHeld listed, and only
// when what decides them may have changed (heldfast.go: the channels'
// breakers and availability, a provider's open time running out, the fit
// world, a slack timer); its own channels do not change while it waits.
// The check on each agent is unchanged.
func (r *runner) checkHeld() {
	if !r.heldGate() {
		r.verifyHeld()
		return
	}
	r.heldDirty, r.heldRecheckAt = false, math.MaxInt64
	kept := r.heldAgents[:0]
	for _, a := range r.heldAgents {
		if !a.waiting || !a.held { // (dispose clears held)
			a.heldListed = false
			continue
		}
		kept = append(kept, a)
		usable := r.usableFast(a) // usableRef, incrementally
		switch {
		case !usable:
			a.usableSince = 0
		case a.usableSince == 0:
			a.usableSince = r.now
			r.heldRecheckAt = min(r.heldRecheckAt, r.now+heldSlackMs+1)
		case r.now-a.usableSince <= heldSlackMs:
			r.heldRecheckAt = min(r.heldRecheckAt, a.usableSince+heldSlackMs+1)
		default:
			r.brk("held-while-usable", "agent %q is still held in a wait %s after a channel it may use closed", a.id, fmtVirtual(r.now-a.usableSince))
			a.held = false
		}
	}
	clear(r.heldAgents[len(kept):])
	r.heldAgents = kept
	r.walked()
	r.verifyHeld()
}

// cutWaits carries out wait-cut effects: the held turn is retried now.
// And a quota wait left while its turn still sleeps (the session's switch
// turned off, its pool changed) ends that sleep: the shim aborts the held
// wait (quota.js onWait, requests.js waitThenRetry) and the failure goes
// back to the host, which ends the turn. Left asleep here, the turn sat
// in a wait the module had ended (held-while-usable, sim seeds 34 and 68
// at 24 h, 120 agents).
func (r *runner) cutWaits(out Output) {
	for _, fx := range out.Effects {
		a := r.agents[fx.Agent]
		if a == nil || !a.waiting {
			continue
		}
		switch {
		case fx.Kind == "wait-cut":
			a.gen++ // drops the wait's own send
			r.push(item{at: r.now, kind: kSend, agent: a, gen: a.gen})
		case fx.Kind == "quota-wait" && fx.Reason == "left":
			a.gen++
			a.busy, a.waiting, a.held = false, false, false
			a.hostRetries, a.failovers, a.recoverSince, a.inRetry = 0, 0, 0, false
		}
	}
}
