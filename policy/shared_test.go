package policy

import (
	"slices"
	"testing"
)

// Which records the shared store is sent, from what it is known to hold.
func TestSharedDue(t *testing.T) {
	const prune = DefaultHealthPruneMs + DefaultMaxClockSkewMs // the store forgets as the file does (persist.go, Forgotten)
	// mine is chA's own record once openA tripped it (at the sim's start).
	mine := func(m *sim) ChannelHealth { return m.s.circuits[chA].record(Open) }
	with := func(f func(*ChannelHealth)) func(*sim) ChannelHealth {
		return func(m *sim) ChannelHealth { h := mine(m); f(&h); return h }
	}
	type note struct {
		rec  func(*sim) ChannelHealth
		read bool
	}
	for _, tc := range []struct {
		name   string
		notes  []note
		forget bool
		due    bool
	}{
		{name: "nothing known: due", due: true},
		{name: "the store holds it: not due", notes: []note{{rec: mine}}},
		{name: "the store holds a winner: not due", notes: []note{{rec: with(func(h *ChannelHealth) { h.Version++ })}}},
		{name: "the store holds an older version: due", notes: []note{{rec: with(func(h *ChannelHealth) { h.Version-- })}}, due: true},
		{name: "the same version, closed: the open wins, due", notes: []note{{rec: with(func(h *ChannelHealth) { h.State = Closed })}}, due: true},
		{name: "an earlier open end at the same version: due", notes: []note{{rec: with(func(h *ChannelHealth) { h.OpenUntilMs-- })}}, due: true},
		{name: "a published older record does not replace a held winner", notes: []note{{rec: mine}, {rec: with(func(h *ChannelHealth) { h.Version-- })}}},
		{name: "a read of the store replaces what was known", notes: []note{{rec: mine}, {rec: with(func(h *ChannelHealth) { h.Version-- }), read: true}}, due: true},
		{name: "after an outage everything is due again", notes: []note{{rec: mine}}, forget: true, due: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, nil)
			openA(m)
			for _, n := range tc.notes {
				m.s.NoteShared([]ChannelHealth{n.rec(m)}, n.read)
			}
			due := m.s.SharedDue(tc.forget)
			i := slices.IndexFunc(due, func(w SharedWrite) bool { return w.Record.Channel == chA })
			if (i >= 0) != tc.due {
				t.Fatalf("due %v, want %v: %+v", i >= 0, tc.due, due)
			}
			if i < 0 {
				return
			}
			h := due[i].Record
			if h != mine(m) || due[i].ExpireAtMs != max(h.OpenUntilMs, h.ChangedAtMs, h.LastFailureMs)+prune {
				t.Fatalf("wrote %+v expiring at %d", h, due[i].ExpireAtMs)
			}
		})
	}
}

// A write reported done is known held; the list a snapshot carries restores it.
func TestSharedWrittenIsHeld(t *testing.T) {
	m := newSim(t, nil)
	openA(m)
	due := m.s.SharedDue(false)
	if len(due) == 0 {
		t.Fatal("nothing due")
	}
	for _, w := range due {
		m.s.NoteShared([]ChannelHealth{w.Record}, false)
	}
	if again := m.s.SharedDue(false); len(again) != 0 {
		t.Fatalf("written records due again: %+v", again)
	}
	n := newSim(t, nil)
	n.s.Merge(n.now, m.s.Health())
	n.s.NoteShared(m.s.SharedHeld(), false) // a rebuilt instance told the snapshot's list
	if again := n.s.SharedDue(false); len(again) != 0 {
		t.Fatalf("a rebuilt instance writes again: %+v", again)
	}
	if !slices.Equal(n.s.SharedHeld(), m.s.SharedHeld()) {
		t.Fatalf("held %+v, want %+v", n.s.SharedHeld(), m.s.SharedHeld())
	}
}

// The order a record replaces another in, here and in the store's own merge
// (shared-redis.js's Lua): the higher version, then open over closed, more
// opens, more failures, the later open end; whatever the clocks say.
func TestSharedMergeOrder(t *testing.T) {
	rec := func(st CircuitState, version uint64, changed int64, f ...func(*ChannelHealth)) ChannelHealth {
		h := ChannelHealth{Channel: chA, State: st, Version: version, ChangedAtMs: changed}
		for _, f := range f {
			f(&h)
		}
		return h
	}
	until := func(ms int64) func(*ChannelHealth) { return func(h *ChannelHealth) { h.OpenUntilMs = ms } }
	for _, tc := range []struct {
		name string
		a, b ChannelHealth
		wins bool
	}{
		{"a later transition wins over a clock far ahead", rec(Open, 5, 1), rec(Closed, 4, 9e12), true},
		{"an earlier one loses", rec(Closed, 4, 9e12), rec(Open, 5, 1), false},
		{"concurrent: the open wins", rec(Open, 5, 1), rec(Closed, 5, 9e12), true},
		{"an equal record replaces nothing", rec(Open, 5, 1), rec(Open, 5, 1), false},
		{"concurrent trips: the later end", rec(Open, 5, 1, until(90)), rec(Open, 5, 1, until(60)), true},
		{"closed: the end says nothing", rec(Closed, 5, 1, until(90)), rec(Closed, 5, 1, until(60)), false},
		{"more opens", rec(Open, 5, 1, func(h *ChannelHealth) { h.Opens = 2 }), rec(Open, 5, 1, until(99)), true},
		{"more failures", rec(Closed, 5, 1, func(h *ChannelHealth) { h.Failures = 2 }), rec(Closed, 5, 1), true},
		{"a record from before versions is version 0", rec(Open, 1, 1), rec(Open, 0, 5), true},
	} {
		if got := remoteWins(tc.a, tc.b); got != tc.wins {
			t.Errorf("%s: wins %v", tc.name, got)
		}
	}
}
