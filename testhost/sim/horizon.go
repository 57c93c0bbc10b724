package sim

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
// to: its home (under "return") or the channel it is on (under "stay"), the
// backup, the chain.
func (r *runner) agentPrefs(a *simAgent) []Channel {
	first := a.home
	if r.cfg.stay && a.routed != (Channel{}) {
		first = a.routed
	}
	out := []Channel{first}
	if r.backup != nil {
		out = append(out, *r.backup)
	}
	return append(out, r.cfg.chain...)
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
		for i, ch := range r.agentPrefs(a) {
			if at := r.backAt(ch, a.id); at+horizonSlackMs <= deadline && r.fits(a, ch, i == 0) { // fit.go
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
}

// checkHeld: no turn stays held while a channel it may use is closed.
func (r *runner) checkHeld() {
	for _, a := range r.agents {
		if !a.waiting || !a.held {
			continue
		}
		usable := false
		for i, ch := range r.agentPrefs(a) {
			if r.closed(ch) && r.fits(a, ch, i == 0) { // fit.go: too small for the request is no use
				usable = true
				break
			}
		}
		switch {
		case !usable:
			a.usableSince = 0
		case a.usableSince == 0:
			a.usableSince = r.now
		case r.now-a.usableSince > heldSlackMs:
			r.brk("held-while-usable", "agent %q is still held in a wait %s after a channel it may use closed", a.id, fmtVirtual(r.now-a.usableSince))
			a.held = false
		}
	}
}

// cutWaits carries out wait-cut effects: the held turn is retried now.
func (r *runner) cutWaits(out Output) {
	for _, fx := range out.Effects {
		if fx.Kind != "wait-cut" {
			continue
		}
		if a := r.agents[fx.Agent]; a != nil && a.waiting {
			a.gen++ // drops the wait's own send
			r.push(item{at: r.now, kind: kSend, agent: a, gen: a.gen})
		}
	}
}
