package policy

import "testing"

// ColdPass, and its soundness: whenever it says yes, a module started from
// the snapshot under the same config passes a new session's first request,
// whatever channel it proposes.
func TestColdPass(t *testing.T) {
	foreign := Channel{"elsewhere", "m"}
	balance := []Balance{{Provider: "p", Script: []string{"x"}, TimeoutMs: 1000, RefreshMs: 60_000, MinimumRemaining: 1}}
	for _, tc := range []struct {
		name   string
		config func(*Config)
		world  func(*sim)
		want   bool
	}{
		{name: "fresh", want: true},
		{name: "failures below the threshold", want: true, world: func(m *sim) {
			m.request("a1", chA)
			m.fail("a1", AfterHost, "SERVER", "", nil)
		}},
		{name: "an open channel", world: openA},
		{name: "a half-open channel", config: func(c *Config) { c.CooldownMs = 10_000 }, world: func(m *sim) {
			openA(m)
			m.advance(10_000)
			m.request("probe", chA)
		}},
		{name: "closed again by its probe", want: true, config: func(c *Config) { c.CooldownMs = 10_000 }, world: func(m *sim) {
			openA(m)
			m.advance(10_000)
			m.request("probe", chA)
			m.step(Settled{Agent: "probe"})
		}},
		{name: "a slow channel (slowness is local)", want: true, config: func(c *Config) { c.Slow.FirstTokenMs = 5_000 }, world: func(m *sim) { m.makeSlow(chA) }},
		{name: "a backup", want: true, world: func(m *sim) { m.step(SetBackup{Channel: chC}) }},
		{name: "pools", config: func(c *Config) { c.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}}}} }},
		{name: "quota rules", config: func(c *Config) { c.Quota.Active = true }},
		{name: "balance scripts", config: func(c *Config) { c.Quota.Balances = balance }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.config)
			if tc.world != nil {
				tc.world(m)
			}
			if got := m.s.ColdPass(); got != tc.want {
				t.Fatalf("ColdPass() = %v, want %v", got, tc.want)
			}
			if !tc.want {
				return
			}
			// The next process: a fresh module, the snapshot restored an hour later.
			next := newSim(t, tc.config)
			next.now = m.now + 3_600_000
			next.s.Merge(next.now, m.s.Health())
			for i, proposed := range []Channel{chA, chB, chC, foreign} {
				out := next.step(Request{Agent: "new-" + string(rune('a'+i)), Proposed: proposed, ReasoningEffort: "high", ContextTokens: 1000})
				if out.Verdict.Kind != Pass {
					t.Errorf("a first request proposing %v: %+v, want a pass", proposed, out.Verdict)
				}
			}
		})
	}
}
