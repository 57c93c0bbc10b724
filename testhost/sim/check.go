package sim

// The invariants. The simulator keeps its own picture of every breaker, built
// only from the module's CircuitChanged effects (and, after a restart, from
// its snapshot), and holds each step's output against it.

const (
	// probeLeaseMs mirrors policy.probeLeaseMs: a half-open slot whose holder
	// vanished frees itself after this long.
	probeLeaseMs = 10 * 60_000
	// weekMs is the documented cap of an open time: a provider's stated reset
	// (header or wording) is honoured up to a week.
	weekMs = 7 * 24 * 3600_000
	// openSlackMs: an open breaker whose time is up must leave Open within
	// this much (its wake is due at once; probes take the slot).
	openSlackMs = 60_000
	probeOwner  = "\x00probe"
)

type breaker struct {
	state       string // closed, open, half-open
	openUntil   int64
	holder      string // the half-open slot's holder
	holderSince int64
	reported    bool // an open-ends break was counted for this open
	// blockEnd (providers): when it last stopped holding its models back, its
	// open time or an earlier close; its models' wakes are due from then. A
	// request can end a provider's open time (half-open) at the very instant
	// it is due, before the wake it had asked for arrives (seed 21).
	blockEnd int64
}

func (r *runner) trk(ch Channel) *breaker {
	b := r.track[ch]
	if b == nil {
		b = &breaker{state: "closed"}
		r.track[ch] = b
	}
	return b
}

func providerOf(ch Channel) Channel { return Channel{ch.Provider, "*"} }

func key(ch Channel) string { return ch.Provider + "/" + ch.Model }

var legal = map[[2]string]bool{
	{"closed", "open"}: true, {"open", "open"}: true, {"open", "half-open"}: true,
	{"open", "closed"}: true, {"half-open", "open"}: true, {"half-open", "closed"}: true,
}

// applyEffects folds a step's breaker effects into the picture, checking
// each transition, and carries out probes and wakes. subject is the channel
// the step is about (a request's proposed one, a failure's); prev, for a
// request, the channel of the agent's previous request.
func (r *runner) applyEffects(out Output, subject, prev Channel) {
	for _, fx := range out.Effects {
		switch fx.Kind {
		case "circuit":
			r.picture++
			ch := fx.Channel
			// A request moves two breakers besides its proposed channel's, whatever
			// their keys: its swap target's, taking the half-open slot when its
			// time is up (-collide, seed 138: proposed openrouter|eu/x, swapped to
			// openrouter/eu|x), and the channel of the agent's previous request,
			// closed by the credit for its success (seed 165).
			swapTarget := out.Kind == "swap" && ch == out.Swap && fx.To == "half-open"
			credited := ch == prev && fx.To == "closed"
			if subject != (Channel{}) && ch != subject && ch.Model != "*" && key(ch) == key(subject) && !swapTarget && !credited {
				r.brk("breaker-identity", "an event about %s moved the breaker of %s (both keyed %q)", subject, ch, key(ch))
			}
			b := r.trk(ch)
			if b.state != fx.From {
				r.brk("transition-legal", "%s reported %s->%s, but it was %s (an unreported transition)", ch, fx.From, fx.To, b.state)
			}
			if !legal[[2]string{fx.From, fx.To}] {
				r.brk("transition-legal", "%s moved %s->%s", ch, fx.From, fx.To)
			}
			if ch.Model == "*" && b.state == "open" && fx.To != "open" {
				b.blockEnd = min(b.openUntil, r.now) // closed, or its time ended (half-open)
			}
			b.state, b.holder, b.reported = fx.To, "", false
			if fx.To == "open" {
				b.openUntil = fx.OpenUntilMs
				if limit := max(r.cfg.maxCooldownMs, weekMs); fx.OpenUntilMs-r.now > limit {
					r.brk("open-cap", "%s opened for %s, beyond the cap of %s", ch, fmtVirtual(fx.OpenUntilMs-r.now), fmtVirtual(limit))
				}
			}
		case "probe":
			b := r.trk(fx.Channel)
			if b.state != "half-open" {
				r.brk("half-open-one-probe", "probe of %s while it is %s", fx.Channel, b.state)
			}
			if b.holder != "" && r.now-b.holderSince < probeLeaseMs {
				r.brk("half-open-one-probe", "probe of %s while %q holds its half-open slot", fx.Channel, b.holder)
			}
			b.holder, b.holderSince = probeOwner, r.now
			d := draw("probe/"+key(fx.Channel), r.now)
			ok, hang, f := r.outcome(fx.Channel, d, true)
			if !hang {
				r.push(item{at: r.now + 300 + int64(d%2000), kind: kProbeResult, ch: fx.Channel, ok: ok, fail: f, gen: r.probeGen})
			}
		case "schedule-wake":
			r.wakeGen++
			if fx.AtMs > 0 {
				// A host's timer can fire a millisecond early (the real host's did,
				// and the policy, finding nothing due, asked for no new wake): one
				// wake in four comes so.
				at := fx.AtMs
				if draw("wake", int64(r.wakeGen))%4 == 0 {
					at--
				}
				r.push(item{at: max(at, r.now), kind: kWake, gen: r.wakeGen})
			}
		}
	}
}

// avoid says whether the picture says ch must not take a request now.
func (r *runner) avoid(ch Channel, agent string) bool {
	if p := r.track[providerOf(ch)]; p != nil && p.state == "open" && r.now < p.openUntil {
		return true
	}
	b := r.track[ch]
	if b == nil {
		return false
	}
	switch b.state {
	case "open":
		return r.now < b.openUntil
	case "half-open":
		return b.holder != "" && b.holder != agent && r.now-b.holderSince < probeLeaseMs
	}
	return false
}

// closed: the picture says ch is closed and its provider lets it through.
func (r *runner) closed(ch Channel) bool {
	if b := r.track[ch]; b != nil && b.state != "closed" {
		return false
	}
	if p := r.track[providerOf(ch)]; p != nil && p.state == "open" && r.now < p.openUntil {
		return false
	}
	return true
}

type prefState struct {
	ch            Channel
	avoid, closed bool
}

// preferences are where the agent's request may go: its homes, the backup, the chain.
func (r *runner) preferences(a *simAgent) []Channel {
	// What the host proposes: a web-selecting agent's later turns keep its
	// pick or its last route, not the turn's channel (route.go).
	out := []Channel{a.proposal()}
	if r.backup != nil {
		out = append(out, *r.backup)
	}
	out = append(out, r.cfg.chain...)
	for _, p := range r.cfg.pools { // a session in a pool walks its routes
		out = append(out, p...)
	}
	return out
}

// beforeRoute records, before a request step, what the checks need.
func (r *runner) beforeRoute(a *simAgent) []prefState {
	var prefs []prefState
	for i, ch := range r.preferences(a) {
		fits := r.fits(a, ch, i == 0) // fit.go: a channel too small for the request is no alternative
		prefs = append(prefs, prefState{ch, r.avoid(ch, a.id) || !fits, r.closed(ch) && fits})
	}
	return prefs
}

// checkRoute holds a request's target against the agent's preferences.
func (r *runner) checkRoute(a *simAgent, target Channel, prefs []prefState) {
	inPrefs := a.proposed[target]
	for _, p := range prefs {
		inPrefs = inPrefs || p.ch == target
	}
	if !inPrefs {
		r.brk("route-outside-preferences", "agent %q routed to %s, outside its homes, the backup and the chain", a.id, target)
		return
	}
	allAvoid, targetAvoid := true, false
	var closedAlt *Channel
	for i := range prefs {
		targetAvoid = targetAvoid || prefs[i].ch == target && prefs[i].avoid
		allAvoid = allAvoid && prefs[i].avoid
		if prefs[i].closed && closedAlt == nil {
			closedAlt = &prefs[i].ch
		}
	}
	// A success credited in the same step may have closed the target first,
	// or its provider, letting through a target whose own time was up (-collide
	// seed 200): judged again on the picture after the step, it is not avoided.
	// A pool world's sessions walk their pool, not this chain-wide order: left out.
	if targetAvoid && closedAlt != nil && !r.closed(target) && r.avoid(target, a.id) && len(r.cfg.pools) == 0 {
		r.brk("route-to-open", "agent %q routed to %s, which is open, while %s is closed", a.id, target, *closedAlt)
	}
	b := r.trk(target)
	if b.state == "half-open" {
		// (A pool world's session whose pool has nothing routable is answered its
		// pool's first route, whatever the chain holds: left out.)
		if b.holder != "" && b.holder != a.id && r.now-b.holderSince < probeLeaseMs && !allAvoid && len(r.cfg.pools) == 0 {
			r.brk("half-open-one-probe", "agent %q admitted to half-open %s while %q holds its slot", a.id, target, b.holder)
		}
		b.holder, b.holderSince = a.id, r.now
	}
}

// releaseHolder frees a half-open slot the agent held on ch: its request
// ended without a word about the channel.
func (r *runner) releaseHolder(agent string, ch Channel) {
	if b := r.track[ch]; b != nil && b.holder == agent {
		b.holder = ""
	}
}

// checkAgentEffects holds a failure step's effects against the agent's budgets.
func (r *runner) checkAgentEffects(a *simAgent, out Output) {
	for _, fx := range out.Effects {
		if fx.Agent != a.id {
			continue
		}
		switch fx.Kind {
		case "failover":
			if quotaMove(out, fx) {
				continue
			}
			a.failovers++
			if a.failovers > r.cfg.maxFailovers {
				r.brk("failover-budget", "agent %q failed over %d times without a success (maxFailovers %d)", a.id, a.failovers, r.cfg.maxFailovers)
			}
		case "retry":
			if fx.Channel == a.routed && r.closed(fx.Channel) {
				r.spendRetry(fx.Channel.Provider)
			}
		case "give-up":
			a.failovers = 0
		case "quota-wait":
			// A long-term quota wait is not bounded by maxFailovers, and the
			// module starts the agent's budgets afresh when it holds the turn
			// there (docs/quota.md, policy enterWait): failovers after the wait
			// count from it (seed 11, 120 agents, 4 h: one failover, a quota
			// wait, then a quota failover along the chain).
			a.failovers = 0
		}
	}
}

// quotaMove reports whether the failover fx is a quota failure's move within
// the session's pool off a provider the same step marked spent. The quota
// rules bound such moves by their marks, not by maxFailovers (docs/quota.md;
// policy onQuotaFailure never counted them): each leaves a provider marked
// for the next usable route, and with none usable the turn waits, unbounded.
// Counting them called a-55 over budget (seed 52, 120 agents, 24 h, 8h21m48s:
// a MODEL_NOT_FOUND failover, then an HTTP 402 on the fallback moved it
// within its pool, maxFailovers 1). A move off a provider already marked
// before the step still counts: the request was sent back to a spent
// provider, a bounce only the budget stops (seed 16, bench-day seed 1).
func quotaMove(out Output, fx Effect) bool {
	routed, marked := false, false
	for _, o := range out.Effects {
		switch {
		case o.Kind == "quota-routed" && o.Agent == fx.Agent:
			routed = true
		case o.Kind == "circuit" && o.Channel == providerOf(fx.FromCh) && o.To == "open" && o.From != "open":
			marked = true
		}
	}
	return routed && marked
}

// budgetTrack holds a provider's request and budgeted-retry times in the
// retry budget's window: the current 10 s slot and the five before it.
type budgetTrack struct{ requests, retries []int64 }

func (r *runner) budget(provider string) *budgetTrack {
	b := r.budgets[provider]
	if b == nil {
		b = &budgetTrack{}
		r.budgets[provider] = b
	}
	return b
}

func (r *runner) spendRetry(provider string) {
	b := r.budget(provider)
	b.retries = append(b.retries, r.now)
	from := (r.now/10_000 - 5) * 10_000
	prune := func(ts []int64) []int64 {
		i := 0
		for i < len(ts) && ts[i] < from {
			i++
		}
		return ts[i:]
	}
	b.requests, b.retries = prune(b.requests), prune(b.retries)
	if allowed := r.cfg.budgetFloor + len(b.requests)*r.cfg.budgetPercent/100; len(b.retries) > allowed {
		r.brk("retry-budget", "%d same-channel retries on %q within a minute of %d requests (allowed %d)", len(b.retries), provider, len(b.requests), allowed)
	}
}

// checkOpenEnds: every open breaker leaves Open once its time is up: a
// provider's at its wake, probes or not; a channel's with probes on (the wake
// comes, the probe takes the slot), while without probes a request finds it
// ready.
func (r *runner) checkOpenEnds() {
	for ch, b := range r.track {
		if b.state != "open" || b.reported {
			continue
		}
		if ch.Model == "*" {
			if r.now > b.openUntil+openSlackMs {
				b.reported = true
				r.brk("provider-open-ends", "provider %q still open %s after its open time ended", ch.Provider, fmtVirtual(r.now-b.openUntil))
			}
			continue
		}
		// A restored breaker waits for the restarted module's first wake.
		until := max(b.openUntil, r.restoredAt+probeLeaseMs)
		if p := r.track[providerOf(ch)]; p != nil {
			switch p.state {
			case "open":
				until = max(until, p.openUntil)
			case "closed", "half-open":
				until = max(until, p.blockEnd)
			}
		}
		if r.cfg.probes && r.now > until+openSlackMs {
			b.reported = true
			r.brk("open-ends", "%s still open %s after its open time ended", ch, fmtVirtual(r.now-until))
		}
	}
}
