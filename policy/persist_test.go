package policy

import "testing"

// Which records the health file keeps: a closed one until its last change
// and its last failure are both past the horizon; an open or half-open one
// always.
func TestStale(t *testing.T) {
	const now, prune = int64(10 * DefaultHealthPruneMs), int64(DefaultHealthPruneMs)
	old := now - prune - 1
	cases := []struct {
		name  string
		h     ChannelHealth
		stale bool
	}{
		{"closed, changed and failed past the horizon", ChannelHealth{State: Closed, ChangedAtMs: old, LastFailureMs: old}, true},
		{"closed, never failed, changed past it", ChannelHealth{State: Closed, ChangedAtMs: old}, true},
		{"closed at the horizon exactly", ChannelHealth{State: Closed, ChangedAtMs: now - prune}, false},
		{"closed long ago, a failure within the day", ChannelHealth{State: Closed, ChangedAtMs: old, LastFailureMs: now - 1}, false},
		{"open since long ago", ChannelHealth{State: Open, ChangedAtMs: old}, false},
		{"half-open since long ago", ChannelHealth{State: HalfOpen, ChangedAtMs: old}, false},
	}
	s := State{cfg: Config{HealthPruneMs: prune}}
	for _, tt := range cases {
		if got := s.Stale(now, tt.h); got != tt.stale {
			t.Errorf("%s: stale %v, want %v", tt.name, got, tt.stale)
		}
	}
}

// The file keeps a trip and forgets a recovery a horizon old; the state
// itself forgets nothing.
func TestPersisted(t *testing.T) {
	m := newSim(t, nil)
	openA(m)
	if got := m.s.Persisted(m.now); len(got) != len(m.s.Health()) {
		t.Fatalf("now: %d of %d records kept", len(got), len(m.s.Health()))
	}
	later := m.now + 400*DefaultHealthPruneMs // chA is open still: its open time ended, no event closed it
	kept := m.s.Persisted(later)
	for _, h := range kept {
		if h.State == Closed {
			t.Fatalf("a closed record a horizon old is kept: %+v", h)
		}
	}
	if len(kept) == 0 {
		t.Fatal("the open record is forgotten")
	}
	if len(m.s.Health()) < len(kept) {
		t.Fatal("Persisted changed the state")
	}
}
