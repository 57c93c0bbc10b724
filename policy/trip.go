package policy

// trip opens ch's breaker on e's failure and moves the agent off it.
func (s *State) trip(now int64, a *agent, e RequestError, ch Channel, c *circuit, class Class, fx *[]Effect) Verdict {
	c.open(now, &s.cfg, e.Failure.RetryAfterMs, e.Failure.Code, class, fx)
	s.checkProvider(now, s.provider(ch.Provider), fx)
	if v, ok := s.credentialTrip(now, a, e, ch, class, fx); ok {
		return v // credential.go: a key is per provider
	}
	return s.failover(now, a, e, ch, class, fx)
}
