package policy

import (
	"errors"
	"reflect"
	"testing"
)

// A request that failed spillAfter times in a row on one channel goes to the
// next routable target at once, and the channel it left stays closed.
func TestSpillSendsTheNextAttemptElsewhere(t *testing.T) {
	always := &HostRetryPolicy{Mode: "always"}
	tests := []struct {
		name     string
		spill    int
		chain    []Channel
		host     *HostRetryPolicy
		script   map[Channel][]string
		requests map[Channel]int
		answered Channel
		primary  CircuitState // the primary's breaker after the turn
	}{
		{"dead primary, stock host: two primary requests, the third attempt on the fallback",
			2, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"TRANSPORT"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"429 forever: the same",
			2, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"RATE_LIMIT"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"500, 500, ok: one answer from the fallback, the primary stays closed",
			2, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"SERVER", "SERVER", "ok"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"mode always: counted the same",
			2, []Channel{chA, chB}, always, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"no retry policy: the plugin's own wait once, then the spill",
			2, []Channel{chA, chB}, nil, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"a code the host does not retry (STREAM_CLOSED): counted once per failure",
			2, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"STREAM_CLOSED"}, chB: {"ok"}},
			map[Channel]int{chA: 2, chB: 1}, chB, Closed},
		{"spillAfter 1: the first failure spills",
			1, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 1, chB: 1}, chB, Closed},
		{"spillAfter 0: off, the threshold opens the primary on the third failure",
			0, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB, Open},
		{"spillAfter above the threshold: the threshold decides first",
			5, []Channel{chA, chB}, stock, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB, Open},
		{"no fallback: nowhere to spill, the host's whole budget",
			2, []Channel{chA}, stock, map[Channel][]string{chA: {"SERVER", "SERVER", "SERVER", "SERVER", "SERVER", "SERVER", "ok"}},
			map[Channel]int{chA: 7}, chA, Closed},
		{"a spilled request failing on the fallback too keeps off the primary and opens the fallback",
			2, []Channel{chA, chB, chC}, stock, map[Channel][]string{chA: {"SERVER"}, chB: {"SERVER"}, chC: {"ok"}},
			map[Channel]int{chA: 2, chB: 2, chC: 1}, chC, Closed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.Chain = tt.chain; c.ProviderThreshold = 0; c.SpillAfter = tt.spill })
			d := drive(t, m, hostModel{tt.host}, tt.script)
			if !reflect.DeepEqual(d.requests, tt.requests) || d.answered != tt.answered {
				t.Fatalf("requests %v answered by %q (last verdict %s); want %v answered by %q", d.requests, d.answered, d.last, tt.requests, tt.answered)
			}
			if got := m.state(chA); got != tt.primary {
				t.Fatalf("the primary is %s after the turn, want %s", got, tt.primary)
			}
		})
	}
}

// After a spill the session's next request goes home, unless the primary's
// burst, still counting, opened it.
func TestAfterASpillTheNextRequestGoesHome(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 0 })
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", stock), Defer)
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "SERVER", "", stock)
	expect(t, out, Retry, "spill:p/b")
	if got, want := out.Effects[0], (Spilled{Agent: "a1", From: chA, To: chB, Code: "SERVER", Failures: 2}); got != want {
		t.Fatalf("effect %+v, want %+v", got, want)
	}
	if v := m.request("a1", chA); v.Kind != Swap || v.Channel != chB {
		t.Fatalf("the spilled attempt: %+v, want a swap to p/b", v)
	}
	m.step(Settled{Agent: "a1"})
	if v := m.request("a1", chA); v.Kind != Pass {
		t.Fatalf("the next request: %+v, want home (pass)", v)
	}
	// That one fails too: the primary's third failure in its burst opens it.
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", stock), Retry, "circuit:closed>open", "failover:p/b")
	if v := m.request("a1", chA); v.Channel != chB {
		t.Fatalf("after the trip: %+v, want p/b", v)
	}
}

// A spill keeps the reasoning-effort rules of any swap: an effort the target
// does not list is dropped (and reported), one it lists is kept.
func TestSpillKeepsTheEffortRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		efforts []string
		drop    bool
	}{{"unlisted: dropped", nil, true}, {"listed: kept", []string{"high"}, false}} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.ProviderThreshold = 0 })
			m.step(ModelInfo{Channel: chB, Known: true, Efforts: tc.efforts})
			for i := 0; i < 2; i++ {
				m.step(Request{Agent: "a1", Proposed: chA, ReasoningEffort: "high"})
				m.fail("a1", BeforeHost, "SERVER", "", stock)
			}
			out := m.step(Request{Agent: "a1", Proposed: chA, ReasoningEffort: "high"})
			if out.Verdict.Kind != Swap || out.Verdict.Channel != chB || out.Verdict.DropReasoningEffort != tc.drop {
				t.Fatalf("verdict %+v, want a swap to p/b dropping the effort: %v", out.Verdict, tc.drop)
			}
			dropped := false
			for _, fx := range out.Effects {
				_, ok := fx.(EffortDropped)
				dropped = dropped || ok
			}
			if dropped != tc.drop {
				t.Fatalf("effects %+v", out.Effects)
			}
		})
	}
}

// Spills count against maxFailovers: two sick channels cannot bounce one
// request between them for ever.
func TestSpillsSpendTheFailoverBudget(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 0; c.MaxFailovers = 1; c.FailureThreshold = 10 })
	for i := 0; i < 2; i++ {
		m.request("a1", chA)
		m.fail("a1", BeforeHost, "SERVER", "", stock)
	}
	if a := m.s.agents.lookup("a1"); a.failovers != 1 {
		t.Fatalf("failovers %d after a spill, want 1", a.failovers)
	}
	for i := 0; i < 2; i++ {
		m.request("a1", chA)
		if out := m.fail("a1", BeforeHost, "SERVER", "", stock); out.Verdict.Kind != Defer {
			t.Fatalf("a spill past the budget: %+v", out)
		}
	}
}

func TestSpillAfterIsValidated(t *testing.T) {
	for _, n := range []int{-1, MaxSpillAfter + 1} {
		cfg := DefaultConfig()
		cfg.SpillAfter = n
		var fe *FieldError
		if err := cfg.Validate(); !errors.As(err, &fe) || fe.Key != "spillAfter" {
			t.Fatalf("spillAfter %d: %v, want a FieldError naming spillAfter", n, err)
		}
	}
	for _, n := range []int{0, 1, MaxSpillAfter} {
		cfg := DefaultConfig()
		cfg.SpillAfter = n
		if err := cfg.Validate(); err != nil {
			t.Fatalf("spillAfter %d: %v", n, err)
		}
	}
}
