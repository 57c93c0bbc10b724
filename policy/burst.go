package policy

// Counting what the host retries. The host's retry plugin owns ordinary
// transient retries, but the plugin sees every failure first (its listener
// runs outermost), and a failure the host is about to retry is evidence about
// the channel all the same. Measured in the real host with the stock
// dsh-llm-retry (5 retries, 0.5 s doubling to 10 s): counting only what the
// host declined made a dead primary cost 6 requests and 18 s before a
// failover; counting every failure costs 3 requests and about 1.5 s of backoff.

// countBeforeHost counts a transient (or unknown) failure on a healthy
// channel towards its burst before the host's retry plugin sees it. Below
// the threshold, or with nowhere to go, the host keeps the failure: a blip
// is still retried where it happened, and a channel with no fallback still
// gets the host's whole budget (and then the plugin's wait). At the
// threshold with a fallback, the channel opens and the agent fails over at
// once, without the rest of the host's budget. Below it, a request that has
// failed spillAfter times in a row here spills: its next attempt goes to the
// next routable target at once, and the channel stays closed (spill.go).
func (s *State) countBeforeHost(now int64, a *agent, e RequestError, ch Channel, class Class, fx *[]Effect) Verdict {
	c := s.circuit(ch)
	c.countFailure(now, s.cfg.BurstWindowMs, e.Failure.Code)
	a.counted = true
	if c.failures >= s.cfg.threshold(ch) && s.hasFallback(now, a, ch) {
		if a.recoveringSince == 0 {
			a.recoveringSince = now
		}
		return s.trip(now, a, e, ch, c, class, fx)
	}
	if to, ok := s.spillTarget(now, a, ch); ok {
		return s.spill(now, a, e, ch, to, fx)
	}
	return Verdict{Kind: Defer}
}

// hasFallback says whether a failover off ch would find a channel now,
// within the agent's failover budget. It changes nothing.
func (s *State) hasFallback(now int64, a *agent, ch Channel) bool {
	if a.failovers >= s.cfg.MaxFailovers {
		return false
	}
	_, ok := s.firstRoutable(now, s.preferences(a, ch), ch)
	return ok
}

// tripOnStall opens ch after a stall cut, when the backup or the chain has
// another channel to go to. A silent stream is expensive evidence: each
// attempt costs a whole silence limit, and a provider that accepts and then
// says nothing rarely answers the next attempt either. So the first cut
// opens the channel, and the failure it ends with (TIMEOUT) fails the agent
// over at once instead of letting the host retry the same silent channel.
// Auxiliary calls (compaction, session title) trip it the same way: they
// have no request-error path, but the agents' next requests avoid the channel.
func (s *State) tripOnStall(now int64, ch Channel, fx *[]Effect) {
	if !s.cfg.Stall.TripOnCut {
		return
	}
	others := prefs{backup: s.backup, chain: s.cfg.Chain} // the backup, then the chain
	if _, ok := s.firstRoutable(now, others, ch); !ok {
		return
	}
	c := s.circuit(ch)
	c.ready(now, fx)
	c.countFailure(now, s.cfg.BurstWindowMs, StallCode)
	c.open(now, &s.cfg, 0, StallCause, ClassTransient, fx)
	s.checkProvider(now, s.provider(ch.Provider), fx)
}
