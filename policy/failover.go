package policy

// failover moves the agent off ch: to the first routable preference, or, when
// none is routable now, waits for the first to come back.
func (s *State) failover(now int64, a *agent, e RequestError, ch Channel, class Class, fx *[]Effect) Verdict {
	to, ok, next, at := s.routeOrReopen(now, s.preferences(a, ch), ch)
	s.noteSkipped(e.Agent, a, a.need, fx, false)
	if ok {
		if a.failovers >= s.cfg.MaxFailovers {
			return s.giveUp(a, e, ch, BudgetExhausted, fx)
		}
		a.countFailover(e.Failure)
		*fx = append(*fx, FailedOver{Agent: e.Agent, From: ch, To: to, Code: e.Failure.Code, Class: class, Home: a.home, Failovers: a.failovers})
		a.savedHome = a.home // the shell keeps it from the failover
		return Verdict{Kind: Retry}
	}
	if s.cfg.Persistent && (len(s.cfg.Chain) == 0 || at < 0) && persists(e.Failure, class) {
		return s.persist(now, a, e, ch, fx) // persistent.go: nowhere else to go, so keep at it
	}
	if len(s.cfg.Chain) == 0 {
		// No chain configured: nothing to reroute to, so no failover and no
		// wait for another channel. (A transient code the host does not retry
		// was still retried on the same channel, with backoff, before this:
		// a reconnect user wants that; see TestEmptyChainRetriesTheSameChannelOnly.)
		return s.giveUp(a, e, ch, NoRoutableFallback, fx)
	}
	if at < 0 {
		return s.giveUp(a, e, ch, NoRoutableFallback, fx) // nothing the host can serve will ever come back
	}
	return s.waitFor(now, a, e, ch, next, at, fx)
}

// countFailover books one failover of the agent's failing request against
// maxFailovers, whichever rule moved it (failover, spill, context fit): one
// count, so the budget means the same for all of them. The first keeps what
// made the agent leave home (see onUnservable); the attempts start afresh.
func (a *agent) countFailover(f Failure) {
	if a.failovers == 0 {
		a.origin, a.hasOrigin = f, true
	}
	a.failovers++
	a.attempts = 0
}

// redirect is countFailover for a request whose next attempt goes to `to`
// at once, off ch (a spill, a window too small): the recovery clock starts,
// and the rest of the request keeps to `to` and off ch (spill.go).
func (s *State) redirect(now int64, a *agent, f Failure, ch, to Channel) {
	if a.recoveringSince == 0 {
		a.recoveringSince = now
	}
	a.countFailover(f)
	a.spillFrom, a.spillTo = s.intern(ch), s.intern(to)
}
