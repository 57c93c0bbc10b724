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

// The defect the clock worlds found with a one-hour horizon: a host that
// ran long holds a channel's closed record at a high version; the file
// forgot it; a host started since numbers the channel afresh and trips it
// at version 1. The long-running host must take that trip once its own
// record is stale, and never while it is not (then the file still held it,
// and the restarted host counted from there).
func TestAStaleRecordGivesWayToARestartedHostsTrip(t *testing.T) {
	long := newSim(t, func(c *Config) { c.HealthPruneMs = MinHealthPruneMs })
	for range 3 { // trips and recoveries: the long-running host's version climbs
		openA(long)
		long.s.circuits[chA].state, long.s.circuits[chA].recordedAtMs = Closed, long.now
		long.s.circuits[chA].version++
		long.advance(1)
	}
	held := long.s.circuits[chA].record(Closed)
	if held.Version < 2 {
		t.Fatalf("version %d", held.Version)
	}
	fresh := newSim(t, func(c *Config) { c.HealthPruneMs = MinHealthPruneMs })
	fresh.now = long.now
	openA(fresh) // the restarted host's trip: version 1
	trip := fresh.s.circuits[chA].record(Open)
	if trip.Version >= held.Version {
		t.Fatalf("the trip's version %d is not below the held %d", trip.Version, held.Version)
	}
	if n, _ := long.s.MergeLive(long.now, []ChannelHealth{trip}); n != 0 {
		t.Fatal("a fresh record of a higher version lost to a restarted host's lower one")
	}
	long.advance(MinHealthPruneMs + 1) // the held record is stale now
	trip.ChangedAtMs, trip.OpenUntilMs = long.now, long.now+60_000
	if n, _ := long.s.MergeLive(long.now, []ChannelHealth{trip}); n != 1 || long.state(chA) != Open {
		t.Fatalf("the stale record kept the restarted host's trip out: adopted %d, %s", n, long.state(chA))
	}
}

// A record one host forgets, every host holding it finds stale, whatever
// their clocks, within the skew: so none holds a version the file lost.
func TestForgottenIsStaleOnEveryClockWithinTheSkew(t *testing.T) {
	s := State{cfg: Config{HealthPruneMs: DefaultHealthPruneMs, MaxClockSkewMs: DefaultMaxClockSkewMs}}
	h := ChannelHealth{State: Closed, ChangedAtMs: 5_000_000_000, LastFailureMs: 4_000_000_000}
	for now := h.ChangedAtMs; now < h.ChangedAtMs+2*DefaultHealthPruneMs; now += 7_919 {
		if !s.Forgotten(now, h) {
			continue
		}
		for _, lag := range []int64{0, 1, DefaultMaxClockSkewMs / 2, DefaultMaxClockSkewMs} {
			if !s.Stale(now-lag, h) {
				t.Fatalf("forgotten at %d, not stale on a clock %d ms behind", now, lag)
			}
		}
	}
}

// A stale record does not give way to another stale one: two processes
// passing copies of old records back and forth would adopt each other's in
// turn, each adoption a save, until the records were forgotten.
func TestAStaleRecordKeepsItsPlaceAgainstAnotherStaleOne(t *testing.T) {
	m := newSim(t, func(c *Config) { c.HealthPruneMs = MinHealthPruneMs })
	openA(m)
	c := m.s.circuits[chA]
	c.state, c.recordedAtMs, c.lastFailureMs = Closed, m.now, 0
	c.version = 10
	held := c.record(Closed)
	m.advance(MinHealthPruneMs + 1)
	older := held
	older.Version = 8 // another process's stale copy, before two changes it missed
	if n, _ := m.s.MergeLive(m.now, []ChannelHealth{older, held}); n != 0 {
		t.Fatalf("stale copies were adopted: %d", n)
	}
	if got := m.s.circuits[chA].version; got != 10 {
		t.Fatalf("version %d", got)
	}
}
