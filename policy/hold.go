package policy

// Held turns. A wait verdict that holds a turn because nothing the agent may
// use is routable (a failover wait, a long-term quota wait) ends as soon as
// one of them is usable again, not at the time it was given: a breaker closed
// by a probe, a provider's open time or mark ended, a backup chosen, a model
// the host can serve again. Measured in the real host: with the quota rules
// on, a turn held for the hour of its fallback's spent allowance was still
// held 72 s after the primary's probe had closed it. The module decides; the
// shim only cuts the wait (WaitCut) and retries the request at once.
//
// Held agents are kept in a slice in the order they were held (each knows its
// place), so a cut walks only them, and in the same order every time.

// hold files the agent as held until atMs (for inspection; it stays held
// until its retry comes).
func (s *State) hold(a *agent, atMs int64) {
	a.heldUntil = atMs
	if a.heldAt == 0 {
		s.held = append(s.held, a)
		a.heldAt = len(s.held)
	}
}

// unhold takes the agent off the held list: its retry came, it went away.
func (s *State) unhold(a *agent) {
	if a.heldAt == 0 {
		return
	}
	i, last := a.heldAt-1, len(s.held)-1
	s.held[i] = s.held[last]
	s.held[i].heldAt = i + 1
	s.held[last] = nil
	s.held = s.held[:last]
	a.heldAt, a.heldUntil = 0, 0
}

// mayHaveFreed says whether a step could have made a channel usable: a
// breaker left Open, or the backup or the host's models changed, or a wake
// (the shim sends one after merging health another host shared, whose
// closed breakers come in as records, not transitions).
func mayHaveFreed(ev Event, fx []Effect) bool {
	switch ev.(type) {
	case SetBackup, ModelInfo, BalanceReading, Wake:
		return true
	}
	for _, f := range fx {
		if c, ok := f.(CircuitChanged); ok && c.To != Open {
			return true
		}
	}
	return false
}

// cutHeld ends the wait of every held agent with a routable preference now.
func (s *State) cutHeld(now int64, fx *[]Effect) {
	var seen cutMemo
	for i := 0; i < len(s.held); {
		a := s.held[i]
		if s.agents.lookup(a.id) != a { // evicted while held (a lost host): nothing to cut
			s.unhold(a)
			continue
		}
		to, ok := seen.firstRoutable(s, now, s.preferences(a, a.routed))
		if !ok { // (past its time too: its retry may be late, and a cut of no wait is a no-op)
			i++
			continue
		}
		s.unhold(a) // the last one moved to i: look at i again
		if a.q.wait != nil {
			a.q.wait.nextAtMs = now
		}
		*fx = append(*fx, WaitCut{Agent: a.id, Channel: to})
	}
}

// WaitCut asks the shim to end the agent's wait now and retry its request:
// Channel, one of its preferences, is usable again.
type WaitCut struct {
	Agent   string
	Channel Channel
}

func (WaitCut) isEffect() {}

// cutMemo remembers, within one cutHeld, the walks already made: in an
// outage most held agents share their preferences, and walking each one's
// was a tenth of bench-day's decisions (native profile), all of them
// answering alike. Nothing a walk reads changes while the held are cut.
//
// What is remembered is the walk without a fit need, which has no side
// effect; it is keyed by what it reads (first, backup, the chain and pool
// by identity). An agent with a fit need (nearly every agent, each its own)
// is walked with it only when that walk found a routable channel: a fit
// only takes candidates away, so when none is routable without one, none
// is with one. The fit walk's only side effect is noting the channels it
// skips (fit.go), which no one reads after the step's handler: the cut
// comes last.
type cutMemo struct {
	n    int
	keys [8]cutKey
	to   [8]Channel
	ok   [8]bool
}

// cutKey is what a walk without a fit need reads of its preferences; a
// chain is told by identity (the config's, a pool's), not by its contents.
type cutKey struct {
	first, backup Channel
	chain         []Channel
	pool          *Pool
}

func (k *cutKey) is(o *cutKey) bool {
	return k.first == o.first && k.backup == o.backup && k.pool == o.pool &&
		len(k.chain) == len(o.chain) && (len(k.chain) == 0 || &k.chain[0] == &o.chain[0])
}

func (m *cutMemo) firstRoutable(s *State, now int64, ps prefs) (Channel, bool) {
	to, ok := m.unfitted(s, now, ps)
	if !ok || !ps.need.any() {
		return to, ok
	}
	return s.firstRoutable(now, ps, Channel{})
}

// unfitted is firstRoutable for ps without its fit need, remembered.
func (m *cutMemo) unfitted(s *State, now int64, ps prefs) (Channel, bool) {
	k := cutKey{ps.first, ps.backup, ps.chain, ps.pool}
	for i := range m.n {
		if m.keys[i].is(&k) {
			return m.to[i], m.ok[i]
		}
	}
	ps.need = fitNeed{}
	to, ok := s.firstRoutable(now, ps, Channel{})
	if m.n < len(m.keys) {
		m.keys[m.n], m.to[m.n], m.ok[m.n] = k, to, ok
		m.n++
	}
	return to, ok
}
