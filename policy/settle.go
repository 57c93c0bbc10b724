package policy

// settle credits the agent's last request with a success, if it had one in
// flight. A request routed before its breaker last changed is stale evidence:
// it was sent before the channel was known to be down (another agent, or
// another host, tripped it meanwhile), so its success does not close it;
// that is the probe's job.
func (s *State) settle(now int64, a *agent, id string, fx *[]Effect) {
	if !a.inFlight {
		return
	}
	a.inFlight = false
	a.forgetRecovery()
	s.quotaSettled(a, id, fx)
	if c := s.circuits[a.routed]; c != nil {
		if c.state != Closed && a.sentAtMs < c.changedAtMs {
			return
		}
		c.succeed(now, fx)
	}
	if p := s.providerBreaker(a.routed.Provider); p != nil && p.state != Closed && a.sentAtMs < p.changedAtMs {
		return
	}
	s.providerSucceeded(now, a.routed.Provider, fx)
}

// onSettled: the agent's turn ended well.
func (s *State) onSettled(now int64, e Settled, fx *[]Effect) {
	if a := s.agents.lookup(e.Agent); a != nil {
		a.seen = now
		s.settle(now, a, e.Agent, fx)
		a.pending = false // a turn that ended has nothing left to report
		s.agents.place(a)
	}
}
