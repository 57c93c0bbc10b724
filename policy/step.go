package policy

import "fmt"

// Step advances the state by one event at time now (ms since the epoch) and
// returns the verdict for the host plus the effects for the shell, in order.
// The state is updated in place; the same state, time and event always give
// the same output.
func Step(s *State, now int64, ev Event) Output { return StepInto(s, now, ev, nil) }

// StepInto is Step appending the effects to buf[:0], so a caller that
// encodes each output before the next step (the wasm entry) reuses one slice
// instead of growing a new one per call.
func StepInto(s *State, now int64, ev Event, buf []Effect) Output {
	fx := buf[:0]
	v := Verdict{Kind: Pass}
	s.skipped = s.skipped[:0] // what this step's walks find too small (fit.go)
	switch e := ev.(type) {
	case Request:
		v = s.onRequest(now, e, &fx)
	case AuxRequest:
		v = s.onAuxRequest(now, e)
	case RequestError:
		v = s.onRequestError(now, e, &fx)
	case Settled:
		if a := s.agents.lookup(e.Agent); a != nil {
			a.seen = now
			s.settle(now, a, e.Agent, &fx)
			a.pending = false // a turn that ended has nothing left to report
			s.agents.place(a)
		}
	case Disposed:
		if a := s.agents.lookup(e.Agent); a != nil {
			if c := s.circuits[a.routed]; c != nil {
				c.release(e.Agent)
				s.releaseSlowProbe(c, e.Agent, &fx) // slow.go
			}
			s.unhold(a)
			s.agents.remove(a)
		}
	case Wake:
		s.onWake(now, &fx)
	case ProbeResult:
		s.onProbeResult(now, e, &fx)
	case ModelInfo:
		s.onModelInfo(now, e, &fx)
	case SetBackup:
		if e.Channel.IsZero() || (e.Channel.Provider != "" && e.Channel.Model != "") {
			s.backup = e.Channel.clone()
		} // a half-named backup is refused (the codec says why); the chain refuses them too
	case ToolResult:
		v = s.onToolResult(e, &fx)
	case StreamCheck:
		v = s.onStreamCheck(now, e, &fx)
	case SetQuota:
		s.onSetQuota(now, e, &fx)
	case SetPool:
		s.onSetPool(now, e, &fx)
	case BalanceReading:
		s.onBalanceReading(now, e, &fx)
	case RestoreRoute:
		s.onRestoreRoute(now, e)
	default:
		panic(fmt.Sprintf("policy: unknown event %T", ev))
	}
	if len(s.held) > 0 && mayHaveFreed(ev, fx) {
		s.cutHeld(now, &fx)
	}
	s.scheduleWake(now, &fx)
	s.refreshBalances(now, &fx)
	return Output{Verdict: v, Effects: fx}
}

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
