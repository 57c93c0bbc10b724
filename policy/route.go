package policy

// prefs is the order in which an agent's request looks for a channel: its
// home (Return) or its current channel (Stay) first, then the user's chosen
// backup, then the chain. It is walked in place, the chain by its index
// (State.chain), so a decision builds no list and hashes no chain entry.
// An agent in a quota pool walks its pool's routes instead of the chain
// (pool set, chain nil): a pool has a handful of routes, found by map.
// Duplicates are harmless: the first routable wins.
type prefs struct {
	first, backup Channel
	chain         []Channel
	pool          *Pool
	need          fitNeed // what the request asks of a target's window (fit.go)
	// outgrown: first is a pool route the context outgrew and not the
	// host's proposal, so it is spared nothing (quota.go poolPreferences).
	outgrown bool
}

func (s *State) preferences(a *agent, current Channel) prefs {
	if ps, ok := s.pinned(a, current); ok {
		return ps // quota.go: pool off waits out a spent allowance where it is
	}
	if !a.pick.IsZero() {
		return s.pickPreferences(a, current) // session.go: the user's own pick is never overridden
	}
	if ps, ok := s.poolPreferences(a, current); ok {
		return ps
	}
	first := current
	if s.cfg.Recovery == Return && !a.home.IsZero() {
		first = a.home
	}
	return prefs{first: first, backup: s.backup, chain: s.cfg.Chain, need: a.need}
}

// firstRoutable returns the first preference that could take a request now,
// skipping avoid and every channel the host said it cannot serve. It changes nothing.
func (s *State) firstRoutable(now int64, ps prefs, avoid Channel) (Channel, bool) {
	to, ok, _, _ := s.walk(now, ps, avoid, Channel{}, false, false, false)
	return to, ok
}

// firstRoutableAvoiding is firstRoutable skipping two channels.
func (s *State) firstRoutableAvoiding(now int64, ps prefs, avoid, also Channel) (Channel, bool) {
	to, ok, _, _ := s.walk(now, ps, avoid, also, false, false, false)
	return to, ok
}

// routeOrReopen is firstRoutable and, when nothing is routable, the
// preference that will be routable first, and when (at < 0: none ever will).
// The channel that just failed counts for that too: it may well be the first
// back. One walk answers both: a failover that found nothing used to walk the
// preferences twice, and at a hundred channels the second walk was most of
// the slowest decisions (make bench: the 10^4 x 100 scale case).
func (s *State) routeOrReopen(now int64, ps prefs, avoid Channel) (to Channel, ok bool, next Channel, at int64) {
	return s.walk(now, ps, avoid, Channel{}, true, true, false)
}

// walkFast is walk for a routable preference the slow-call breaker does not avoid (slow.go).
func (s *State) walkFast(now int64, ps prefs, avoid, also Channel, fast bool) (to Channel, ok bool, next Channel, at int64) {
	return s.walk(now, ps, avoid, also, false, false, fast)
}

// chainAt is ch's index in the chain, -1 when it is not there (or zero).
func (s *State) chainAt(ch Channel) int {
	if ch.IsZero() {
		return -1
	}
	if i, ok := s.chainIdx[ch]; ok {
		return i
	}
	return -1
}

// walk goes through the preferences in order: the first routable one that
// is neither avoid nor also (nor, with fast, avoided as slow) ends it; on the
// way, with reopen, it keeps the earliest to come back (avoid among them only
// with reopenAvoid). A channel the host cannot serve never comes back by waiting.
func (s *State) walk(now int64, ps prefs, avoid, also Channel, reopen, reopenAvoid, fast bool) (to Channel, ok bool, next Channel, at int64) {
	fast = fast && s.slowCount > 0
	at = -1
	offer := func(ch Channel, t int64) {
		if at < 0 || t < at {
			next, at = ch, t
		}
	}
	// look tries a channel found by name (home, backup, pool route); the chain
	// is walked by its index below.
	// A target too small for the request never comes back by waiting either.
	// The first preference is the session's own channel: the host proposed
	// it, and a context too long for it is the host's to compact; only a
	// window it refused keeps the request off it.
	fit := ps.need.any()
	own := func(ch Channel) bool { return ch == ps.first && !ps.outgrown }
	look := func(ch Channel) bool {
		own := own(ch)
		if !s.servable(now, ch) || fit && ch != avoid && (own && s.refusedSkip(ch, ps.need) || !own && s.skip(ch, ps.need)) {
			return false
		}
		if ch != avoid && ch != also && s.routable(now, ch) && !(fast && s.slowAvoided(now, ch)) {
			return true
		}
		if reopen && (reopenAvoid || ch != avoid) {
			offer(ch, s.reopensAt(now, ch))
		}
		return false
	}
	for _, ch := range [2]Channel{ps.first, ps.backup} {
		if !ch.IsZero() && look(ch) {
			return ch, true, Channel{}, 0
		}
	}
	// Chain entries are told apart by index (the chain has no duplicates):
	// comparing each entry's names with avoid's read the names' bytes, and
	// once 10^4 agents had passed between two decisions each was a cache
	// miss, most of a failover that found nothing at 100 channels (make
	// bench, the 10^4 x 100 scale case).
	avoidAt, alsoAt, firstAt := s.chainAt(avoid), s.chainAt(also), s.chainAt(ps.first)
	if ps.outgrown {
		firstAt = -1
	}
	// An entry's names are read only when it is chosen (the same misses).
	found, nextAt := -1, -1
	if !fit && !fast && s.unservableMarks == 0 {
		found, nextAt = s.chain.walkDue(now, len(ps.chain), avoidAt, alsoAt, reopen, reopenAvoid, &at)
	} else {
		found, nextAt = s.walkChain(now, &ps, avoidAt, alsoAt, firstAt, fit, fast, reopen, reopenAvoid, &at)
	}
	if found >= 0 {
		return ps.chain[found], true, Channel{}, 0
	}
	if nextAt >= 0 {
		next = ps.chain[nextAt]
	}
	if ps.pool != nil {
		for _, r := range ps.pool.Routes {
			if look(r.Channel) {
				return r.Channel, true, Channel{}, 0
			}
		}
	}
	return Channel{}, false, next, at
}

// walkChain is walk's chain part when some entry may be skipped (a window
// to fit, a slow channel, a model the host refused): the first routable
// entry's index (-1: none), and, with reopen, the one that comes back first
// and when (at, which it lowers; nextAt -1 when no entry lowered it).
func (s *State) walkChain(now int64, ps *prefs, avoidAt, alsoAt, firstAt int, fit, fast, reopen, reopenAvoid bool, at *int64) (found, nextAt int) {
	nextAt = -1
	for i := range ps.chain {
		if s.unservableMarks > 0 && !s.servable(now, ps.chain[i]) ||
			fit && i != avoidAt && (i == firstAt && s.refusedSkip(ps.chain[i], ps.need) || i != firstAt && s.skipInChain(i, ps.need, ps)) {
			continue
		}
		if i != avoidAt && i != alsoAt && s.routableInChain(now, i) && !(fast && s.slowAvoidedInChain(now, i)) {
			return i, nextAt
		}
		if reopen && (reopenAvoid || i != avoidAt) {
			if t := s.reopensAtInChain(now, i); *at < 0 || t < *at {
				nextAt, *at = i, t
			}
		}
	}
	return -1, nextAt
}

// keepsEffort says whether effort may go to target: only when the host said
// the target's model lists it. An unknown model drops it, because the host
// refuses an unlisted effort before sending, which ends the turn.
func (s *State) keepsEffort(target Channel, effort string) bool {
	info, ok := s.models[target]
	if !ok || !info.Known {
		return false
	}
	for _, e := range info.Efforts {
		if e == effort {
			return true
		}
	}
	return false
}

// checkProvider opens the provider's breaker when ProviderThreshold distinct
// models under it are down now (open, or holding a probe): the platform is
// down, not one model, so its other models are not worth a failover either.
// It stays open as long as the longest of them, or providerCooldownMs when
// set. It walks only the provider's own channels.
func (s *State) checkProvider(now int64, p *provider, fx *[]Effect) {
	if s.cfg.ProviderThreshold == 0 {
		return
	}
	open, until := 0, int64(0)
	for _, c := range p.breaker.kids {
		if c.state != Closed && !c.routable(now) {
			open++
			until = max(until, c.openUntilMs)
		}
	}
	b := &p.breaker
	b.ready(now, fx)
	if open < s.cfg.ProviderThreshold || until <= now {
		return
	}
	if s.cfg.ProviderCooldownMs > 0 {
		// An open time of its own (dsh-model-failover's platformCooldownMs):
		// set when it opens, not stretched by each model that opens after.
		if b.state != Open {
			b.openUntilMs = now + s.cfg.ProviderCooldownMs
			b.transition(now, Open, "models-open", "", fx)
		}
		return
	}
	if b.state != Open || b.openUntilMs < until {
		b.openUntilMs = until
		b.transition(now, Open, "models-open", "", fx)
	}
}

// providerSucceeded closes the provider's breaker: one of its models answered.
func (s *State) providerSucceeded(now int64, name string, fx *[]Effect) {
	if p := s.providerBreaker(name); p != nil && p.state != Closed {
		p.transition(now, Closed, "recovered", "", fx)
	}
}

// onSetBackup takes the user's backup, which comes before the chain.
func (s *State) onSetBackup(e SetBackup) {
	switch {
	case e.Channel.IsZero():
		s.backup = Channel{}
	case e.Channel.Provider != "" && e.Channel.Model != "":
		s.backup = s.intern(e.Channel)
	} // a half-named backup is refused (the codec says why); the chain refuses them too
}
