package policy

import "testing"

// Issue #17 item 7: a closed channel's burst is kept in its health record, so
// short runs one after another (one process each) against a dead primary add
// up to failureThreshold within the burst window. Each run is a new State
// restored from the health the last one left: before the burst was kept,
// every run paid spillAfter primary requests and the primary never opened.
func TestSpilledBurstGoesOnInTheNextProcess(t *testing.T) {
	tests := []struct {
		name       string
		gapMs      int64 // between the runs
		wantOpenAt int   // the run (1-based) whose failure opens the primary; 0: none of three
		wantFirst  []string
	}{
		{"runs 10 s apart: the second run's first failure is the third of the burst and opens the primary", 10_000, 2,
			[]string{"circuit:closed>open", "failover:p/b"}},
		{"runs further apart than the burst window: each starts a new burst and spills", DefaultBurstWindowMs + 1, 0,
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var health []ChannelHealth
			now := int64(1_000_000)
			opened := 0
			for run := 1; run <= 3 && opened == 0; run++ {
				m := newSim(t, func(c *Config) { c.ProviderThreshold = 0 })
				m.now = now
				if n, skipped := m.s.Merge(m.now, health); len(skipped) > 0 || n != len(health) {
					t.Fatalf("run %d: merged %d of %d (%v)", run, n, len(health), skipped)
				}
				for attempt := 1; ; attempt++ {
					m.request("job", chA)
					out := m.fail("job", BeforeHost, "TRANSPORT", "", stock)
					if m.state(chA) == Open {
						opened = run
						if attempt != 1 {
							t.Fatalf("run %d opened the primary at its attempt %d, want its first", run, attempt)
						}
						expect(t, out, Retry, tt.wantFirst...)
						break
					}
					if out.Verdict.Kind == Retry { // the spill: the run's answer comes from the fallback
						expect(t, out, Retry, "spill:p/b")
						break
					}
					expect(t, out, Defer)
					m.advance(500)
				}
				health = m.s.Health()
				now = m.now + tt.gapMs
			}
			if opened != tt.wantOpenAt {
				t.Fatalf("the primary opened in run %d, want %d (health %+v)", opened, tt.wantOpenAt, health)
			}
		})
	}
}

// The record carries the burst's last failure; one without it (written
// before it existed) dates the burst from its change, as before.
func TestHealthRecordCarriesTheBurst(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 0 })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "SERVER", "", stock)
	h := m.s.Health()
	if len(h) != 1 || h[0].State != Closed || h[0].Failures != 1 || h[0].LastFailureMs != m.now {
		t.Fatalf("health %+v, want p/a closed with 1 failure at %d", h, m.now)
	}
	// A writer's clock ahead: the burst is dated now, never later.
	ahead := h[0]
	ahead.LastFailureMs = m.now + 3_600_000
	n := newSim(t, nil)
	n.now = m.now
	n.s.Merge(n.now, []ChannelHealth{ahead})
	if got := n.s.circuits[chA].lastFailureMs; got != n.now {
		t.Fatalf("a last failure from a clock ahead dated %d, want now (%d)", got, n.now)
	}
	old := h[0]
	old.LastFailureMs, old.ChangedAtMs = 0, 5
	o := newSim(t, nil)
	o.s.Merge(o.now, []ChannelHealth{old})
	if got := o.s.circuits[chA].lastFailureMs; got != 5 {
		t.Fatalf("a record without lastFailureMs dated its burst %d, want its change (5)", got)
	}
}
