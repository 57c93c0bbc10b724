package policy

// Provider breakers in the persisted health. A provider breaker is not a
// function of its models' breakers: a success on one of its models closes it
// while others stay open (route.go, providerSucceeded). Derived again from
// the models alone after a restart, it would come back open, and the model
// that had just answered would be avoided until the others' open time is up
// (hours, for a spent quota). So health carries provider breakers too, as
// records whose model is "*", and restore takes them as they are; it derives
// a provider from its models only when it took no record of it (none in the
// file, as in one written before provider records existed, or an older one
// than its own).

// providerHealth lists the provider breakers as health records: every one
// that ever moved (a closed one that never opened says nothing).
func (s *State) providerHealth() []ChannelHealth {
	var out []ChannelHealth
	for _, p := range s.providers {
		if b := &p.breaker; b.changedAtMs != 0 || b.state != Closed || b.version != 0 {
			out = append(out, b.record(b.state))
		}
	}
	return out
}

// isProviderRecord reports whether a health record is a provider breaker's.
func isProviderRecord(h ChannelHealth) bool { return h.Channel.Model == providerModel }

// mergeProvider adopts a provider record when it wins over the state's own
// breaker for that provider (merge.go, takes), half-open included (circuit.adopt).
// Adopting re-files the provider and its channels in the wake index.
// live: the record is news from a running process (State.MergeLive).
func (s *State) mergeProvider(now int64, h ChannelHealth, live bool) bool {
	p := s.providers[h.Channel.Provider]
	if p != nil && !s.takesOver(h, p.breaker.record(p.breaker.state), now) {
		return false
	}
	fresh := live && (p == nil || news(h, p.breaker.record(p.breaker.state)))
	s.provider(h.Channel.Provider).breaker.adopt(h, now, s.cfg.MaxClockSkewMs, fresh)
	return true
}
