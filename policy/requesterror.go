package policy

func (s *State) onRequestError(now int64, e RequestError, fx *[]Effect) (v Verdict) {
	a := s.agents.get(e.Agent, now)
	defer s.agents.place(a)
	// The after-host question about a deferred failure is not a new failure.
	fresh := e.Phase == BeforeHost || !a.deferred
	defer func() { a.deferred = v.Kind == Defer }()
	ch := a.routed
	a.inFlight = false
	// Whether the before-host question already counted this very failure: the
	// after-host question is about the same failure and must not count it twice.
	counted := a.counted
	a.counted = false
	a.pending = true // until a verdict hands the failure back (giveUp)
	if ch.IsZero() || ch.Provider != e.Provider {
		// This state did not route the request, so it cannot say which channel
		// failed; a breaker keyed by guesswork would route nothing. The host's
		// own retry plugin gets the failure, and then the host decides.
		if e.Phase == BeforeHost {
			return Verdict{Kind: Defer}
		}
		return s.giveUp(a, e, Channel{Provider: e.Provider}, UnknownChannel, fx)
	}
	if fresh && s.contextExceeded(a, e, ch) {
		return s.onContextExceeded(now, a, e, ch, fx) // fit.go: a window, not the channel's health
	}
	class := s.cfg.classify(e.Failure)
	e.Failure.RetryAfterMs = statedWaitMs(e.Failure, now)
	if fresh && e.Failure.Code != "ABORTED" {
		a.noteFailure(ch)
		a.noteTried(ch, e.Failure.Code)
	}
	if fresh {
		a.noteUnknown(class)
	}
	if s.cfg.unknownSpent(a, class) {
		return s.handBackUnknown(a, e, ch, fx) // unknowncap.go: retryUnknown off, the cap reached
	}
	c := s.circuits[ch] // nil: never failed, closed; created once there is something to record
	if c != nil {
		c.ready(now, fx)
	}
	if class == ClassModelUnavailable && unservableCode(e.Failure.Code) && a.hasOrigin {
		return s.onUnservable(now, a, e, ch, class, fx)
	}
	p := s.providerBreaker(ch.Provider)
	if p != nil {
		p.ready(now, fx) // a provider whose open time is up no longer counts as down
	}
	healthy := (c == nil || c.state == Closed) && (p == nil || p.state != Open)

	if e.Phase == BeforeHost && healthy && class == ClassPermanent {
		return Verdict{Kind: Defer} // the host's retry policy decides first ("always" retries even these)
	}
	if e.Phase == BeforeHost && healthy && (class == ClassTransient || class == ClassUnknown) {
		return s.countBeforeHost(now, a, e, ch, class, fx)
	}
	if class == ClassPermanent {
		if c != nil {
			c.release(e.Agent) // a cancelled probe says nothing about the channel
		}
		return s.giveUp(a, e, ch, NotRecoverable, fx)
	}
	if class == ClassQuota && s.cfg.QuotaActive() {
		return s.onQuotaFailure(now, a, e, ch, fx) // quota.go: marks, pool failover, long-term wait
	}
	if a.recoveringSince == 0 {
		a.recoveringSince = now
	}
	c = s.circuit(ch)
	if !counted {
		c.countFailure(now, s.cfg.BurstWindowMs, e.Failure.Code)
	}
	open := class == ClassQuota || class == ClassModelUnavailable || // a spent allowance, a missing model
		c.state != Closed || !healthy || // a failed probe, a provider already down
		(e.Phase == AfterHost && e.HostRetry.covers(e.Failure.Code)) || // the host's budget is spent
		c.failures >= s.cfg.threshold(ch)
	if !open {
		if to, ok := s.spillTarget(now, a, ch); ok {
			return s.spill(now, a, e, ch, to, fx) // elsewhere at once: no backoff needed
		}
		if s.provider(ch.Provider).budget.spend(now, &s.cfg) {
			return s.wait(now, a, e, ch, c, class, fx)
		}
	}
	// Open, or out of retry budget: stop retrying this channel, look elsewhere.
	return s.trip(now, a, e, ch, c, class, fx)
}
