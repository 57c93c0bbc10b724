package policy

// Context-fit routing. Long agent tasks carry long contexts: a session 300k
// tokens deep on a 1M-window primary that failed over by order alone to a
// 128k fallback failed there with CONTEXT_WINDOW_EXCEEDED (a permanent code:
// the turn ended), or the host compacted the conversation to fit, losing
// work, for an outage of minutes. So every request carries its context size
// as the host measures it (its token meter's estimate), every target its
// window (the host's model info), and a target that cannot hold the context
// is skipped for that request: never a sure CONTEXT_WINDOW_EXCEEDED.
//
// The host keeps a share of each window for the answer: its compaction
// (dsh-compaction-basic) compacts once the measured pressure reaches
// thresholdRatio (0.8 by default) of the target's window. A target is
// therefore usable up to (100 - ContextReservePercent)% of its window; beyond
// it the host would compact on arrival, the very loss this avoids.

// DefaultContextReservePercent is the host's own reserve: its compaction
// threshold of 0.8 leaves a fifth of the window for the answer.
const DefaultContextReservePercent = 20

// contextExceededCode is the host's code for a request the model's window
// could not hold (dsh-llm CONTEXT_WINDOW_EXCEEDED_CODE).
const contextExceededCode = "CONTEXT_WINDOW_EXCEEDED"

// SkippedTooSmall reports that a routing decision for the agent's request
// passed over Channel: its window (less the host's reserve, Usable) cannot
// hold the request's context. The shell audits `skipped-too-small`.
type SkippedTooSmall struct {
	Agent         string
	Channel       Channel
	ContextTokens int64
	ContextWindow int64
	Usable        int64
}

func (SkippedTooSmall) isEffect() {}

var _ Effect = SkippedTooSmall{}

// fitNeed is what a request asks of a target's window: the context it
// carries (0: unknown), and after a CONTEXT_WINDOW_EXCEEDED without a
// measured context, a window larger than the one that refused it.
type fitNeed struct {
	tokens, window int64
	// known: only a target whose window the host declared will do (a
	// failover off a refusal must know the next window is larger).
	known bool
}

func (n fitNeed) any() bool { return n.tokens > 0 || n.window > 0 || n.known }

// usable is the context ch can take: its window less the reserve, lowered
// to below the smallest context it refused (a window mis-declared, an
// estimate off); 0 when nothing is known.
func (s *State) usable(ch Channel) (window, usable int64) {
	if info, ok := s.models[ch]; ok && info.ContextWindow > 0 {
		window = info.ContextWindow
		usable = window - window*int64(s.cfg.ContextReservePercent)/100
	}
	if r, ok := s.refused[ch]; ok && (usable == 0 || r-1 < usable) {
		usable = r - 1
		if window == 0 {
			window = r - 1
		}
	}
	return window, usable
}

// fits reports whether ch can hold a request needing n. An unknown window
// holds anything: the host said nothing, and refusing would strand sessions
// on hosts whose adapters declare no windows.
func (s *State) fits(ch Channel, n fitNeed) bool {
	if !n.any() || len(s.models) == 0 && len(s.refused) == 0 && !n.known {
		return true
	}
	window, usable := s.usable(ch)
	return fitsIn(window, usable, n)
}

func fitsIn(window, usable int64, n fitNeed) bool {
	switch {
	case window == 0:
		return !n.known
	case n.tokens > 0 && usable > 0 && n.tokens > usable:
		return false
	}
	return n.window == 0 || window >= n.window
}

// skip is fits for a walk: a target too small is noted (once per walk) for
// the decision's audit.
func (s *State) skip(ch Channel, n fitNeed) bool {
	if s.fits(ch, n) {
		return false
	}
	s.noteSkip(ch)
	return true
}

// refusedSkip is skip for the session's own channel: only a context as long
// as one it refused keeps a request off it.
func (s *State) refusedSkip(ch Channel, n fitNeed) bool {
	if !s.refusedFor(ch, n) {
		return false
	}
	s.noteSkip(ch)
	return true
}

// refusedFor reports whether ch refused a context as long as n's: a sure
// refusal, on the session's own channel too.
func (s *State) refusedFor(ch Channel, n fitNeed) bool {
	r, ok := s.refused[ch]
	return ok && n.tokens > 0 && n.tokens >= r
}

func (s *State) noteSkip(ch Channel) {
	for _, c := range s.skipped {
		if c == ch {
			return
		}
	}
	s.skipped = append(s.skipped, ch)
}

// noteSkipped turns the step's skipped targets into audit effects. A
// running session on a fallback would skip the same too-small targets on
// every request: a plain request reports them only when the first of them
// changed (quiet: it was reported, and the agent not routed there since);
// a failover or spill always does.
func (s *State) noteSkipped(id string, a *agent, n fitNeed, fx *[]Effect, quiet bool) {
	if len(s.skipped) == 0 {
		return
	}
	if !(quiet && a.skipNoted == s.skipped[0]) {
		for _, ch := range s.skipped {
			w, u := s.usable(ch)
			*fx = append(*fx, SkippedTooSmall{Agent: id, Channel: ch, ContextTokens: n.tokens, ContextWindow: w, Usable: u})
		}
	}
	a.skipNoted = s.intern(s.skipped[0])
	s.skipped = s.skipped[:0]
}

// onContextExceeded handles a CONTEXT_WINDOW_EXCEEDED the operator has not
// reclassified: the channel's window was smaller than declared (or the
// estimate was off), not the channel's health. It learns that the channel
// cannot hold this context and fails the agent over, at once, to the next
// target that can (a larger window); none: the failure goes back to the
// host, whose compaction then makes the context fit.
func (s *State) onContextExceeded(now int64, a *agent, e RequestError, ch Channel, fx *[]Effect) Verdict {
	if c := s.circuits[ch]; c != nil {
		c.release(e.Agent) // a probe cut short by a long context says nothing of the channel
	}
	need := fitNeed{tokens: a.tokens, known: true}
	if a.tokens > 0 {
		if r, ok := s.refused[ch]; !ok || a.tokens < r {
			s.refused[s.intern(ch)] = a.tokens
			s.chainFit(ch)
		}
	} else if w, _ := s.usable(ch); w > 0 {
		need.window = w + 1
	}
	a.need = need
	to, ok := s.walkFit(now, s.preferences(a, ch), ch, need)
	if !ok || a.failovers >= s.cfg.MaxFailovers {
		s.noteSkipped(e.Agent, a, need, fx, false)
		reason := NoRoutableFallback
		if ok {
			reason = BudgetExhausted
		}
		return s.giveUp(a, e, ch, reason, fx)
	}
	s.noteSkipped(e.Agent, a, need, fx, false)
	s.redirect(now, a, e.Failure, ch, to) // this request's next attempt goes there
	*fx = append(*fx, FailedOver{Agent: e.Agent, From: ch, To: to, Code: e.Failure.Code, Class: ClassPermanent, Home: a.home, Failovers: a.failovers})
	a.savedHome = a.home
	return Verdict{Kind: Retry}
}

// walkFit is firstRoutable for a request needing n.
func (s *State) walkFit(now int64, ps prefs, avoid Channel, n fitNeed) (Channel, bool) {
	ps.need = n
	to, ok, _, _ := s.walk(now, ps, avoid, Channel{}, false, false, false)
	return to, ok
}

// contextExceeded reports whether e is a window refusal the fit rules
// handle: the operator may still class the code as they like, and without
// the request's context or the refusing window there is no telling which
// target is larger: the failure is handed back as a permanent one.
func (s *State) contextExceeded(a *agent, e RequestError, ch Channel) bool {
	if e.Failure.Code != contextExceededCode {
		return false
	}
	if _, overridden := s.cfg.Classes[contextExceededCode]; overridden {
		return false
	}
	w, _ := s.usable(ch)
	return a.tokens > 0 || w > 0
}

// chainFit refreshes the chain index's usable context for ch's entries.
func (s *State) chainFit(ch Channel) {
	if i, ok := s.chainIdx[ch]; ok {
		s.chain.window[i], s.chain.usable[i] = s.usable(ch)
	}
}

// fitsInChain is fits for the chain's entry i, by its index.
func (s *State) fitsInChain(i int, n fitNeed) bool {
	return fitsIn(s.chain.window[i], s.chain.usable[i], n)
}

// skipInChain is skip for the chain's entry i. The chain holds no
// duplicates (Validate), so only an entry that is also the first or the
// backup preference can have been noted already: a walk skipping a hundred
// entries costs a hundred appends, not ten thousand comparisons (make bench:
// BenchmarkFitCheck).
func (s *State) skipInChain(i int, n fitNeed, ps *prefs) bool {
	if s.fitsInChain(i, n) {
		return false
	}
	if ch := s.cfg.Chain[i]; ch == ps.first || ch == ps.backup {
		s.noteSkip(ch)
	} else {
		s.skipped = append(s.skipped, ch)
	}
	return true
}
