package policy

// The host's auxiliary model calls: compaction summaries and session titles.
// They are made outside any agent's request (ctx.llm.stream with a purpose),
// to the session's own model or the last logged route, so after a failover
// they went back to the channel the agent had left, failed there, and ended
// the compaction (and with it the turn) or lost the title. The stall watchdog
// already cut them; this routes them like an agent's request: off a channel
// that is open, to the first routable of the backup and the chain.

// AuxRequest is an auxiliary call about to be sent to Proposed.
type AuxRequest struct {
	Proposed        Channel
	Purpose         string // the host's purpose: compaction, session-title, ...
	ReasoningEffort string
}

func (AuxRequest) isEvent() {}

// onAuxRequest answers Pass or Swap and changes nothing: the call belongs to
// no agent (no failover count, no recovery clock), takes no probe slot and is
// not counted against the retry budget; its failure, if any, is the caller's.
func (s *State) onAuxRequest(now int64, e AuxRequest) Verdict {
	if e.Proposed.IsZero() || (s.servable(now, e.Proposed) && s.openFor(now, e.Proposed) == nil) {
		return Verdict{Kind: Pass}
	}
	ps := prefs{first: e.Proposed, backup: s.backup, chain: s.cfg.Chain}
	to, ok := s.firstRoutable(now, ps, e.Proposed)
	if !ok {
		return Verdict{Kind: Pass} // nowhere better: the call tries where it was going
	}
	v := Verdict{Kind: Swap, Channel: to}
	if e.ReasoningEffort != "" && (s.stripsEffort(to) || !s.keepsEffort(to, e.ReasoningEffort)) {
		v.DropReasoningEffort = true
	}
	return v
}

// openFor returns the breaker that keeps ch from taking a request now (its
// own, or its provider's), nil when it may.
func (s *State) openFor(now int64, ch Channel) *circuit {
	if c := s.circuits[ch]; c != nil && c.state != Closed && !c.routable(now) {
		return c
	}
	if p := s.providerBreaker(ch.Provider); p != nil && p.state != Closed && !p.routable(now) {
		return p
	}
	return nil
}
