package policy

// A session's own route: its home (where it belongs, what it was on before
// any failover) and the user's explicit model pick. Both are the module's to
// know; the shell persists them with the session's other settings (the home
// from each FailedOver or SessionRoute until the Returned that ends the
// absence, the pick from SessionRoute) and hands them back at bring-up (RestoreRoute), so a
// restarted host still knows where a session on its sticky failover route
// belongs. A session that never leaves home and never picks costs no effect.
//
// A pick is a proposal the plugin did not route that differs from the last
// proposal: the host proposes the session's selection, which is either the
// route its last request went out on (the header the host logged: the
// plugin's own choice) or a model the user chose. A host whose selection is
// fixed (headless: the default model every time) never changes its proposal,
// so it never reads as a pick.

// SessionRoute reports the session's home and the user's pick when the shell
// holds less than a restarted host would need (routeEffect): it persists both.
type SessionRoute struct {
	Agent      string
	Home, Pick Channel
}

// Returned reports that the agent's request goes back home after it left:
// From is where it was (its last request, or, first thing after a restart,
// the route the host proposed).
type Returned struct {
	Agent    string
	From, To Channel
}

// RestoreRoute hands a session's persisted home and pick back to the module
// at bring-up, before its first request. An agent that already routed a
// request knows better, and keeps its own.
type RestoreRoute struct {
	Agent      string
	Home, Pick Channel
}

func (SessionRoute) isEffect() {}
func (Returned) isEffect()     {}
func (RestoreRoute) isEvent()  {}

func (s *State) onRestoreRoute(now int64, e RestoreRoute) {
	a := s.agents.get(e.Agent, now)
	defer s.agents.place(a)
	if !a.routed.IsZero() {
		return
	}
	if (e.Home.Provider == "") != (e.Home.Model == "") || (e.Pick.Provider == "") != (e.Pick.Model == "") {
		return // a half-named channel is no channel (the codec says why)
	}
	a.home, a.pick, a.restored = s.intern(e.Home), s.intern(e.Pick), !e.Home.IsZero()
	a.savedHome, a.savedPick = a.home, a.pick
}

// noteProposal settles the agent's home and pick from a request's proposal,
// before it is routed. It reports whether the proposal is a new pick.
func (s *State) noteProposal(a *agent, proposed Channel) (picked bool) {
	last := a.lastProposed
	a.lastProposed = s.intern(proposed)
	switch {
	case !a.routed.IsZero() && proposed != a.routed && !last.IsZero() && proposed != last:
		// The user chose a model the plugin did not route: honoured until they
		// pick again or put the session into a pool.
		a.pick, a.home = a.lastProposed, a.lastProposed
		return true
	case a.routed.IsZero() && a.restored:
		// First request after a restart: the host proposes the route the
		// session last went out on, which may be a failover target. The
		// restored home stays.
	case a.routed.IsZero():
		// A new session: it belongs where the host starts it. Later, the same
		// proposal again (a fixed selection), or the route the plugin chose,
		// changes nothing.
		a.home = a.lastProposed
	}
	return false
}

// returnsHome reports whether routing the agent to target brings it back
// home from elsewhere (not a new session, not a pick it just made).
func (a *agent) returnsHome(target, proposed Channel, picked bool) (from Channel, ok bool) {
	from = a.routed
	if from.IsZero() {
		if !a.restored {
			return Channel{}, false
		}
		from = proposed
	}
	return from, !picked && target == a.home && from != a.home && !a.home.IsZero()
}

// routeEffect emits SessionRoute when the shell holds less than a restarted
// host would need: the user's pick changed, or the agent is routed away from
// home while the shell does not hold that home (a new session whose home is
// open starts elsewhere with no failover). A FailedOver carries the home
// itself, a Returned ends it; a session at home that never picks costs no
// effect.
func (s *State) routeEffect(id string, a *agent, target Channel, fx *[]Effect) {
	away := target != a.home && !a.home.IsZero()
	if a.pick != a.savedPick || away && a.savedHome != a.home {
		a.savedPick = a.pick
		if away {
			a.savedHome = a.home
		}
		*fx = append(*fx, SessionRoute{Agent: id, Home: a.home, Pick: a.pick})
	}
}

// clearPick ends the user's pick: they chose a pool, or the default.
func (s *State) clearPick(id string, a *agent, fx *[]Effect) {
	if a.pick.IsZero() {
		return
	}
	a.pick = Channel{}
	s.routeEffect(id, a, a.routed, fx)
}

// pickPreferences is the order of a session whose user picked a model: the
// pick (or, in Stay mode, where it is now), the backup, then the pool the
// pick belongs to (named or inferred), else the chain.
func (s *State) pickPreferences(a *agent, current Channel) prefs {
	first := current
	if s.cfg.Recovery == Return {
		first = a.pick
	}
	ps := prefs{first: first, backup: s.backup, chain: s.cfg.Chain, need: a.need}
	if s.cfg.QuotaActive() {
		if p := s.routingPool(a, a.pick); p != nil {
			ps.chain, ps.pool = nil, p
		}
	}
	return ps
}

// readsLow reports whether provider's fresh balance reading is below its
// minimum: a new session does not start there while another is usable.
func (s *State) readsLow(now int64, provider string) bool {
	b := s.cfg.balance(provider)
	if b == nil || s.stale(now, b) {
		return false
	}
	r := s.q.readings[provider]
	return r.ok && !r.shows(b)
}

// withAllowance is the first preference a new session may start on: routable,
// servable and not reading low; false when there is none.
func (s *State) withAllowance(now int64, ps prefs) (Channel, bool) {
	ok := func(ch Channel) bool {
		return !ch.IsZero() && s.servable(now, ch) && s.routable(now, ch) && !s.readsLow(now, ch.Provider) &&
			(ch == ps.first || s.fits(ch, ps.need)) // fit.go
	}
	for _, ch := range [2]Channel{ps.first, ps.backup} {
		if ok(ch) {
			return ch, true
		}
	}
	for _, ch := range ps.chain {
		if ok(ch) {
			return ch, true
		}
	}
	if ps.pool != nil {
		for _, r := range ps.pool.Routes {
			if ok(r.Channel) {
				return r.Channel, true
			}
		}
	}
	return Channel{}, false
}
