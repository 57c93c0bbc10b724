package policy

func (s *State) onRequest(now int64, e Request, fx *[]Effect) Verdict {
	a := s.agents.get(e.Agent, now)
	defer s.agents.place(a)
	retry := a.pending // the host (or a wait) retries a failed request
	a.gaveUp = nil     // a new request ends the give-up the chip shows
	s.unhold(a)
	// A new request while the last one is still in flight means it went through.
	s.settle(now, a, e.Agent, fx)
	if !retry {
		a.newRequest()
		a.need = fitNeed{} // a window asked of the last request's retries does not carry over
	}
	a.tokens, a.need.tokens = e.ContextTokens, e.ContextTokens
	fresh := a.routed.IsZero() && !a.restored // a new session: route choice applies
	picked := s.noteProposal(a, e.Proposed)   // session.go
	proposed := s.hostProposal(a, e.Proposed) // hedge.go: where a won hedge left it
	s.quotaBeforeRequest(now, a, e.Agent, proposed, fx)
	ps := s.preferences(a, proposed)
	target, ok := a.spillTo, !a.spillTo.IsZero() && s.servable(now, a.spillTo) && s.routable(now, a.spillTo) && s.fits(a.spillTo, a.need)
	if !ok { // a spilled request keeps off the channel it left
		target, ok = s.firstRoutable(now, ps, a.spillFrom)
	}
	if !ok && !a.spillFrom.IsZero() {
		target, ok = s.firstRoutable(now, ps, Channel{})
	}
	if ok && fresh && s.readsLow(now, target.Provider) {
		// A low reading keeps a new session off a provider: it starts on the
		// first preference with allowance, its home. (A pool's route choice
		// already did so among its routes; when none has allowance this still
		// finds the user's backup.)
		if t, found := s.withAllowance(now, ps); found {
			target, a.home = t, s.intern(t)
		}
	}
	if ok && (fresh || s.cfg.Slow.MoveRunning) && a.spillTo.IsZero() {
		// slow.go: a new session starts on a channel that is not slow, and
		// stays there; a running one stays where it is unless MoveRunning.
		if t := s.preferFast(now, ps, target, a.spillFrom, Channel{}); t != target {
			target = t
			if fresh {
				a.home = s.intern(t)
			}
		}
	}
	if ok && fresh {
		s.admitSlowProbe(now, e.Agent, target, fx)
	}
	if !ok {
		// Nothing is routable (a wait ran out early, or another agent took the
		// probe slot): let the proposed channel try rather than invent one.
		target = s.fallbackTarget(a, proposed)
	}
	if from, back := a.returnsHome(target, e.Proposed, picked); back {
		*fx = append(*fx, Returned{Agent: e.Agent, From: from, To: target})
		a.savedHome = Channel{} // the shell drops it at the return
	}
	a.restored = false
	s.noteSkipped(e.Agent, a, a.need, fx, true)
	if target == a.skipNoted {
		a.skipNoted = Channel{} // routed there after all: a later skip is news again
	}
	s.routeEffect(e.Agent, a, target, fx)
	if c := s.circuits[target]; c != nil { // an unseen channel is closed: nothing to admit
		c.admit(now, e.Agent, fx)
	}
	s.provider(target.Provider).budget.request(now)
	a.routed, a.inFlight, a.pending, a.sentAtMs, a.counted = s.intern(target), true, false, now, false
	if target == e.Proposed {
		return Verdict{Kind: Pass}
	}
	v := Verdict{Kind: Swap, Channel: target}
	if s.stripsEffort(target) {
		if e.ReasoningEffort != "" { // forced (effort.go): a pool route's own effort yields too
			v.DropReasoningEffort = true
			*fx = append(*fx, EffortDropped{Agent: e.Agent, Channel: target, Effort: e.ReasoningEffort})
		}
	} else if effort, ok := s.routeEffort(a, target); ok {
		v.ReasoningEffort = effort // a pool route's own effort
	} else if e.ReasoningEffort != "" && !s.keepsEffort(target, e.ReasoningEffort) {
		v.DropReasoningEffort = true
		*fx = append(*fx, EffortDropped{Agent: e.Agent, Channel: target, Effort: e.ReasoningEffort})
	}
	return v
}
