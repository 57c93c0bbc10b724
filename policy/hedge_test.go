package policy

import (
	"strings"
	"testing"
)

func hedgeSim(t *testing.T, mutate func(*Config)) *sim {
	return newSim(t, func(c *Config) {
		c.Chain = []Channel{chA, chB, chC}
		c.ProviderThreshold = 0
		c.Hedge.AfterMs = 2_000
		if mutate != nil {
			mutate(c)
		}
	})
}

// open routes agent's request and returns the stream check of its call,
// opened now on the channel it was routed to.
func (m *sim) open(agent string) StreamCheck {
	ch := routedTo(m.request(agent, chA), chA)
	return StreamCheck{Channel: ch, OpenedMs: m.now, Agent: agent}
}

func hedges(fx []Effect) []Hedged {
	var out []Hedged
	for _, e := range fx {
		if h, ok := e.(Hedged); ok {
			out = append(out, h)
		}
	}
	return out
}

func TestHedgeOffByDefault(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB} })
	e := m.open("s1")
	if v := m.step(e).Verdict; v.Kind != Watch || v.Stall.AtMs != e.OpenedMs+DefaultStallFirstChunkMs || !v.Stall.Hedge.To.IsZero() {
		t.Fatalf("opening: %+v, want a watch at the stall bound and no hedge", v)
	}
	m.advance(DefaultHedgeMaxMs)
	if v := m.step(e).Verdict; !v.Stall.Hedge.To.IsZero() {
		t.Fatalf("hedged with hedge off: %+v", v)
	}
}

// Where and when a due call is hedged: the target a failover would pick.
func TestHedgeDecision(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		before func(m *sim)
		check  func(e *StreamCheck)
		want   Channel // zero: no hedge
	}{
		{"due: to the next target", nil, nil, nil, chB},
		{"next target open: the one after", nil, func(m *sim) { m.trip(chB) }, nil, chC},
		{"next target slow: the one after", func(c *Config) { c.Slow = SlowConfig{FirstTokenMs: 5_000, MinCalls: 1} },
			func(m *sim) { m.firstToken(chB, 60_000) }, nil, chC},
		{"nothing routable: none", nil, func(m *sim) { m.trip(chB); m.trip(chC) }, nil, Channel{}},
		{"already hedging: not again", nil, nil, func(e *StreamCheck) { e.Hedging = true }, Channel{}},
		{"a compaction call: never", nil, nil, func(e *StreamCheck) { e.Purpose = PurposeCompaction }, Channel{}},
		{"an unknown session: never", nil, nil, func(e *StreamCheck) { e.Agent = "stranger" }, Channel{}},
		{"cancelled: never", nil, nil, func(e *StreamCheck) { e.Cancelled = true }, Channel{}},
		{"the first chunk came: never", nil, nil, func(e *StreamCheck) { e.Chunks, e.LastChunkMs = 1, e.OpenedMs+100 }, Channel{}},
		{"budget 0, floor 0: never", func(c *Config) { c.Hedge.BudgetPercent, c.Hedge.BudgetFloor = 0, 0 }, nil, nil, Channel{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := hedgeSim(t, tt.mutate)
			if tt.before != nil {
				tt.before(m)
			}
			e := m.open("s1")
			if v := m.step(e).Verdict; v.Kind != Watch || v.Stall.AtMs != e.OpenedMs+2_000 {
				t.Fatalf("opening: %+v, want a watch at the hedge", v)
			}
			m.advance(2_000)
			if tt.check != nil {
				tt.check(&e)
			}
			v := m.step(e).Verdict
			if v.Stall.Hedge.To != tt.want {
				t.Fatalf("hedge to %v, want %v (%+v)", v.Stall.Hedge.To, tt.want, v)
			}
			if !tt.want.IsZero() && (v.Kind != Watch || v.Stall.AtMs != e.OpenedMs+DefaultStallFirstChunkMs || v.Stall.Hedge.AfterMs != 2_000 || v.Stall.Hedge.Reason != "hedge.afterMs") {
				t.Fatalf("a hedge keeps the stall bound and says why: %+v", v)
			}
		})
	}
}

// trip opens ch with quota failures of an agent of its own.
func (m *sim) trip(ch Channel) {
	for i := 0; i < 5 && m.state(ch) == Closed; i++ {
		m.step(Request{Agent: "tripper", Proposed: ch})
		m.step(RequestError{Agent: "tripper", Provider: ch.Provider, Failure: Failure{Code: "MODEL_NOT_FOUND", Message: "gone"}, Phase: AfterHost})
	}
	if m.state(ch) == Closed {
		m.t.Fatalf("could not open %v", ch)
	}
	m.step(Settled{Agent: "tripper"})
}

// With the stall bound off, a hedge alone keeps the call watched.
func TestHedgeWithoutStallBound(t *testing.T) {
	m := hedgeSim(t, func(c *Config) { c.Stall.FirstChunkMs, c.Stall.IdleMs = 0, 0 })
	e := m.open("s1")
	if v := m.step(e).Verdict; v.Kind != Watch || v.Stall.AtMs != e.OpenedMs+2_000 {
		t.Fatalf("opening: %+v, want a watch at the hedge", v)
	}
	m.advance(2_000)
	if v := m.step(e).Verdict; v.Kind != Watch || v.Stall.AtMs != 0 || v.Stall.Hedge.To != chB {
		t.Fatalf("due: %+v, want a hedge and no further wake", v)
	}
	e.Hedging = true
	if v := m.step(e).Verdict; v.Kind != Watch {
		t.Fatalf("while hedging: %+v, want a watch (its first token ends the race)", v)
	}
}

// hedge.budgetPercent bounds hedges per provider per minute, across agents.
func TestHedgeBudget(t *testing.T) {
	m := hedgeSim(t, nil) // 5 %, floor 1
	var checks []StreamCheck
	for i := 0; i < 40; i++ {
		checks = append(checks, m.open("s"+string(rune('A'+i))))
	}
	m.advance(2_000)
	n := 0
	for _, e := range checks {
		if !m.step(e).Verdict.Stall.Hedge.To.IsZero() {
			n++
		}
	}
	if want := 1 + 40*5/100; n != want {
		t.Fatalf("%d hedges of 40 requests, want %d (floor 1 + 5 %%)", n, want)
	}
	m.advance(budgetWindowMs + budgetSlotMs)
	e := m.open("late")
	m.advance(2_000)
	if m.step(e).Verdict.Stall.Hedge.To.IsZero() {
		t.Fatal("a minute later the budget is back")
	}
}

// The race's end: audited, the breakers told, the session moved only by a won hedge.
func TestHedgeResult(t *testing.T) {
	tests := []struct {
		name     string
		result   HedgeResult
		routed   Channel // where the agent's request counts as routed after
		slowFrom bool    // the primary turned slow (slow.minCalls 1, 2.95 s)
	}{
		{"the hedge wins", HedgeResult{Winner: WinnerHedge, FirstTokenMs: 500}, chB, true},
		{"the primary wins", HedgeResult{Winner: WinnerPrimary, FirstTokenMs: 2_900}, chA, false},
		{"the hedge fails", HedgeResult{Winner: WinnerNone, End: "hedge-failed", Code: "SERVER"}, chA, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := hedgeSim(t, func(c *Config) { c.Slow = SlowConfig{FirstTokenMs: 2_950, MinCalls: 1} })
			e := m.open("s1")
			m.step(e)
			m.advance(2_000)
			if m.step(e).Verdict.Stall.Hedge.To != chB {
				t.Fatal("no hedge")
			}
			m.advance(1_000)
			r := tt.result
			r.Agent, r.OpenedMs = "s1", e.OpenedMs
			fx := m.step(r).Effects
			hs := hedges(fx)
			if len(hs) != 1 || hs[0].Winner != r.Winner || hs[0].From != chA || hs[0].To != chB || hs[0].AfterMs != 2_000 {
				t.Fatalf("effects %+v, want one Hedged", fx)
			}
			if r.Winner == WinnerHedge && (hs[0].FirstTokenMs != 3_000 || hs[0].LoserWaitMs != 3_000) {
				t.Errorf("a won hedge's times: %+v", hs[0])
			}
			if r.Winner != WinnerHedge && hs[0].LoserWaitMs != 1_000 {
				t.Errorf("the hedge waited 1 s: %+v", hs[0])
			}
			if got := m.s.agents.lookup("s1").routed; got != tt.routed {
				t.Errorf("routed %v, want %v", got, tt.routed)
			}
			if m.state(chA) != Closed || m.state(chB) != Closed || m.s.agents.lookup("s1").failovers != 0 {
				t.Errorf("a hedge is no failure and no failover")
			}
			if slow := m.s.slowAvoided(m.now, chA); slow != tt.slowFrom {
				t.Errorf("primary slow %v, want %v (the loser's wait is a sample)", slow, tt.slowFrom)
			}
			if again := m.step(r).Effects; len(hedges(again)) != 0 {
				t.Errorf("a second result for one hedge: %+v", again)
			}
			// The next request: a won hedge returns home (recovery: return), audited as a return.
			fx = m.step(Request{Agent: "s1", Proposed: chA}).Effects
			returned := false
			for _, x := range fx {
				_, ok := x.(Returned)
				returned = returned || ok
			}
			if returned != (r.Winner == WinnerHedge) {
				t.Errorf("next request's effects %v", kinds(fx))
			}
		})
	}
}

// The learned delay: maxMs until enough calls are measured, then the
// percentile, bounded.
func TestHedgeLearnedDelay(t *testing.T) {
	m := hedgeSim(t, func(c *Config) {
		c.Hedge = HedgeConfig{AfterPercentile: 90, MinMs: 1_000, MaxMs: 8_000, BudgetPercent: 5, BudgetFloor: 1}
	})
	if d, why := m.s.hedgeDelay(chA); d != 8_000 || !strings.Contains(why, "0 of 8") {
		t.Fatalf("unmeasured: %d %q", d, why)
	}
	for i := int64(1); i <= 10; i++ {
		m.firstToken(chA, i*500) // 500 .. 5000
	}
	if d, why := m.s.hedgeDelay(chA); d != 4_500 || why != "p90 of the last 10 first tokens" {
		t.Fatalf("measured: %d %q", d, why)
	}
	for i := 0; i < 40; i++ {
		m.firstToken(chA, 100)
	}
	if d, _ := m.s.hedgeDelay(chA); d != 1_000 {
		t.Fatalf("fast: %d, want minMs", d)
	}
}

func TestHedgeConfigErrors(t *testing.T) {
	tests := []struct {
		h   HedgeConfig
		key string
	}{
		{HedgeConfig{AfterMs: 2_000, AfterPercentile: 95, MinMs: 1_000, MaxMs: 2_000}, "hedge.afterMs"},
		{HedgeConfig{AfterMs: 5, MinMs: 1_000, MaxMs: 2_000}, "hedge.afterMs"},
		{HedgeConfig{AfterPercentile: 100, MinMs: 1_000, MaxMs: 2_000}, "hedge.afterPercentile"},
		{HedgeConfig{MinMs: 5_000, MaxMs: 2_000}, "hedge.maxMs"},
		{HedgeConfig{MinMs: 1_000, MaxMs: 2_000, BudgetPercent: 101}, "hedge.budgetPercent"},
	}
	for _, tt := range tests {
		err := tt.h.validate()
		if fe, ok := err.(*FieldError); !ok || fe.Key != tt.key {
			t.Errorf("%+v: %v, want an error naming %s", tt.h, err, tt.key)
		}
	}
}

// A session the hedge moved stays where the hedge answered with recovery
// stay, as after a failover, though the host, whose header names the
// primary, proposes the primary again; a proposal of its own ends that.
// With recovery return it goes home (TestHedgeResult).
func TestHedgeWinnerKeepsTheSessionWithStay(t *testing.T) {
	m := hedgeSim(t, func(c *Config) { c.Recovery = Stay })
	e := m.open("s1")
	m.step(e)
	m.advance(2_000)
	if m.step(e).Verdict.Stall.Hedge.To != chB {
		t.Fatal("no hedge")
	}
	m.advance(1_000)
	m.step(HedgeResult{Agent: "s1", Winner: WinnerHedge, OpenedMs: e.OpenedMs, FirstTokenMs: 500})
	m.step(Settled{Agent: "s1"})
	for i := range 2 {
		if got := routedTo(m.request("s1", chA), chA); got != chB {
			t.Fatalf("request %d after the hedge went to %v, want the winner %v (recovery stay)", i+1, got, chB)
		}
		m.step(Settled{Agent: "s1"})
	}
	if got := routedTo(m.request("s1", chC), chC); got != chC {
		t.Fatalf("the user's pick went to %v, want %v", got, chC)
	}
	m.step(Settled{Agent: "s1"})
	if got := routedTo(m.request("s1", chA), chA); got != chA {
		t.Fatalf("after the pick the primary proposed goes to %v, want it as proposed", got)
	}
}
