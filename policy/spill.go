package policy

// Spilling a failing request. Backoff protects the channel that is failing;
// an attempt sent to a different channel does not need it. Measured in the
// real host with the stock dsh-llm-retry (0.5 s doubling): a dead primary
// cost three of its requests and 1.6 s before the breaker opened and the
// agent failed over. So after SpillAfter failures in a row of one request on
// one channel, its next attempt goes at once to the next routable target
// (the same target a failover would pick), and the channel is not opened:
// its burst keeps counting towards failureThreshold, and the session's next
// request goes home again unless that opened it. A blip (500, 500, ok) costs
// one answer from the fallback; a dead primary costs two requests.

// noteFailure counts a failure of the agent's request on ch towards the
// spill: failures in a row of one request on one channel.
func (a *agent) noteFailure(ch Channel) {
	if a.burstCh != ch {
		a.burstCh, a.burstN = ch, 0
	}
	a.burstN++
}

// newRequest forgets what the agent's previous request spilled: a new
// request (not a retry of a failed one) starts from its preferences again.
func (a *agent) newRequest() {
	a.burstCh, a.burstN, a.spillFrom, a.spillTo = Channel{}, 0, Channel{}, Channel{}
}

// spillTarget is where the agent's failing request on ch spills to, if it
// has failed SpillAfter times in a row there and a target is routable within
// the agent's failover budget.
func (s *State) spillTarget(now int64, a *agent, ch Channel) (Channel, bool) {
	if s.cfg.SpillAfter == 0 || a.burstCh != ch || a.burstN < s.cfg.SpillAfter || a.failovers >= s.cfg.MaxFailovers {
		return Channel{}, false
	}
	ps := s.preferences(a, ch)
	to, ok := s.firstRoutableAvoiding(now, ps, ch, a.spillFrom) // not back where it spilled from
	if ok {
		to = s.preferFast(now, ps, to, ch, a.spillFrom) // slow.go
	}
	return to, ok
}

// spill sends the agent's next attempt to `to` at once: a retry verdict,
// which the host carries out without its backoff; the request's attempts go
// to `to` (the host's retries of it included) until it ends, and keep off ch
// when `to` is no longer routable (onRequest). It counts as a failover against the
// agent's budget, so two sick channels cannot bounce a request for ever.
func (s *State) spill(now int64, a *agent, e RequestError, ch, to Channel, fx *[]Effect) Verdict {
	s.redirect(now, a, e.Failure, ch, to)
	s.noteSkipped(e.Agent, a, a.need, fx, false)
	*fx = append(*fx, Spilled{Agent: e.Agent, From: ch, To: to, Code: e.Failure.Code, Failures: a.burstN})
	return Verdict{Kind: Retry}
}

// Spilled reports that the agent's failing request goes to To at once after
// Failures failures in a row on From, which stays closed: the shim audits a
// `spill` record and appends the host's own `llm/retry` row for it.
type Spilled struct {
	Agent    string
	From, To Channel
	Code     string
	Failures int
}

func (Spilled) isEffect() {}
