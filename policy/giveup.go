package policy

// giveUp hands the failure in hand back to the host: ch and its code are
// what ended the turn, and the record lists every channel tried since the
// agent's last success.
func (s *State) giveUp(a *agent, e RequestError, ch Channel, reason GiveUpReason, fx *[]Effect) Verdict {
	tried, made := a.tried, a.failovers // before forgetRecovery clears them
	a.forgetRecovery()
	a.pending = false
	s.unhold(a)
	g := GaveUp{Agent: e.Agent, Channel: ch, Reason: reason, Code: e.Failure.Code, Tried: tried, Failovers: made}
	a.gaveUp = &g
	*fx = append(*fx, g)
	return Verdict{Kind: Delegate, Reason: reason}
}
