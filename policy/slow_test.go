package policy

import (
	"strings"
	"testing"
)

// firstToken is the stream check the shim sends when a call's first chunk
// came ms after it opened.
func (m *sim) firstToken(ch Channel, ms int64) Output {
	return m.step(StreamCheck{Channel: ch, OpenedMs: m.now - ms, Chunks: 1, LastChunkMs: m.now, FirstToken: true, FirstTokenMs: ms})
}

func slowKinds(fx []Effect) string {
	var out []string
	for _, e := range fx {
		if c, ok := e.(SlowChanged); ok {
			out = append(out, c.Channel.String()+":"+string(c.From)+">"+string(c.To))
		}
	}
	return strings.Join(out, ",")
}

func slowSim(t *testing.T, mutate func(*Config)) *sim {
	return newSim(t, func(c *Config) {
		c.Chain = []Channel{chA, chB, chC}
		c.ProviderThreshold = 0
		c.CooldownMs = 60_000
		c.Slow = SlowConfig{FirstTokenMs: 5_000, MinCalls: 3}
		if mutate != nil {
			mutate(c)
		}
	})
}

// The table: a script of first-token times on the primary, then where a new
// session starts and what the breaker said.
func TestSlowBreakerTransitions(t *testing.T) {
	tests := []struct {
		name    string
		samples []int64 // first-token ms on chA, in order
		effects string  // the SlowChanged transitions of the whole script
		newOn   Channel // where a new session starts afterwards
	}{
		{"fast calls: never slow", []int64{100, 200, 4_999, 5_000}, "", chA},
		{"two slow calls: not yet", []int64{20_000, 20_000}, "", chA},
		{"three slow calls in a row: slow", []int64{20_000, 20_000, 20_000}, "p/a:closed>slow", chB},
		{"a fast call breaks the run", []int64{20_000, 20_000, 100, 20_000, 20_000}, "", chA},
		{"a fast call closes it", []int64{20_000, 20_000, 20_000, 100}, "p/a:closed>slow,p/a:slow>closed", chA},
		{"slow calls while slow say nothing new", []int64{20_000, 20_000, 20_000, 20_000, 30_000}, "p/a:closed>slow", chB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := slowSim(t, nil)
			var fx []Effect
			for _, ms := range tt.samples {
				m.advance(1_000)
				fx = append(fx, m.firstToken(chA, ms).Effects...)
			}
			if got := slowKinds(fx); got != tt.effects {
				t.Errorf("transitions %q, want %q", got, tt.effects)
			}
			v := m.request("new", chA)
			if got := routedTo(v, chA); got != tt.newOn {
				t.Errorf("a new session starts on %s, want %s", got, tt.newOn)
			}
		})
	}
}

func routedTo(v Verdict, proposed Channel) Channel {
	if v.Kind == Swap {
		return v.Channel
	}
	return proposed
}

func (m *sim) makeSlow(ch Channel) {
	for i := 0; i < m.s.cfg.Slow.MinCalls; i++ {
		m.firstToken(ch, m.s.cfg.Slow.FirstTokenMs*4)
	}
	if c := m.s.circuits[ch]; c == nil || !c.slow.slow() {
		m.t.Fatalf("%s is not slow", ch)
	}
}

// A running session on the slow channel stays there; a new one goes to the
// first channel that is not slow, in order, and stays there too.
func TestSlowMovesNewSessionsOnly(t *testing.T) {
	m := slowSim(t, nil)
	m.request("old", chA)
	m.makeSlow(chA)
	if v := m.request("old", chA); v.Kind != Pass {
		t.Fatalf("the running session was moved: %+v", v)
	}
	if v := m.request("new", chA); v.Kind != Swap || v.Channel != chB {
		t.Fatalf("the new session: %+v, want a swap to %s", v, chB)
	}
	// Its next request (the host proposes the route it went out on) stays on B.
	if v := m.request("new", chB); v.Kind != Pass {
		t.Fatalf("the new session's next request: %+v", v)
	}
	// B slow too: the next new session goes to C, the order kept.
	m.makeSlow(chB)
	if v := m.request("third", chA); v.Channel != chC {
		t.Fatalf("with A and B slow: %+v, want %s", v, chC)
	}
	// Everything slow: a slow answer beats none, the order kept.
	m.makeSlow(chC)
	if v := m.request("fourth", chA); v.Kind != Pass {
		t.Fatalf("everything slow: %+v, want the primary", v)
	}
}

func TestSlowMoveRunningMovesTheRunningSession(t *testing.T) {
	m := slowSim(t, func(c *Config) { c.Slow.MoveRunning = true })
	m.request("old", chA)
	m.makeSlow(chA)
	if v := m.request("old", chA); v.Kind != Swap || v.Channel != chB {
		t.Fatalf("moveRunning: %+v, want a swap to %s", v, chB)
	}
}

// An open (failed) channel is not routable at all; a slow one is still
// preferred to nothing, but never to a routable one that is not slow.
func TestSlowNeverBeatsAFastRoutableChannel(t *testing.T) {
	m := slowSim(t, nil)
	m.makeSlow(chA)
	m.request("b", chB)
	m.fail("b", AfterHost, "QUOTA", "", stock) // B opens
	if v := m.request("new", chA); v.Channel != chC {
		t.Fatalf("A slow, B open: %+v, want %s", v, chC)
	}
}

// After the cooldown one new session probes the slow channel: a fast first
// token closes it, a slow one keeps it slow for another cooldown.
func TestSlowHalfOpenProbe(t *testing.T) {
	for _, fast := range []bool{true, false} {
		m := slowSim(t, nil)
		m.makeSlow(chA)
		m.advance(60_000)
		out := m.step(Request{Agent: "probe", Proposed: chA})
		if out.Verdict.Kind != Pass || slowKinds(out.Effects) != "p/a:slow>half-open" {
			t.Fatalf("after the cooldown: %+v, want the probe on the primary", out)
		}
		if v := m.request("other", chA); v.Channel != chB {
			t.Fatalf("while the probe runs: %+v, want %s", v, chB)
		}
		ms, want, next := int64(300), "p/a:half-open>closed", chA
		if !fast {
			ms, want, next = 20_000, "p/a:half-open>slow", chB
		}
		if got := slowKinds(m.firstToken(chA, ms).Effects); got != want {
			t.Fatalf("probe answered in %d ms: %q, want %q", ms, got, want)
		}
		if v := m.request("after", chA); routedTo(v, chA) != next {
			t.Fatalf("after a probe answered in %d ms: %+v, want %s", ms, v, next)
		}
	}
}

// A probe whose session never reports holds the slot for the lease only.
func TestSlowProbeLeaseRunsOut(t *testing.T) {
	m := slowSim(t, nil)
	m.makeSlow(chA)
	m.advance(60_000)
	m.request("probe", chA)
	m.advance(probeLeaseMs)
	if v := m.request("next", chA); v.Kind != Pass {
		t.Fatalf("after the lease: %+v, want a new probe on the primary", v)
	}
}

// A probe whose session goes away frees the slot at once: the next new session probes.
func TestSlowProbeFreedWhenItsSessionGoes(t *testing.T) {
	m := slowSim(t, nil)
	m.makeSlow(chA)
	m.advance(60_000)
	m.request("probe", chA)
	if got := slowKinds(m.step(Disposed{Agent: "probe"}).Effects); got != "p/a:half-open>slow" {
		t.Fatalf("disposed probe: %q", got)
	}
	if v := m.request("next", chA); v.Kind != Pass {
		t.Fatalf("after the probe went away: %+v, want a new probe on the primary", v)
	}
}

// A spill goes to a channel that is not slow when there is one.
func TestSlowSpillPrefersAFastTarget(t *testing.T) {
	m := slowSim(t, func(c *Config) { c.SpillAfter = 1 })
	m.makeSlow(chB)
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "SERVER", "", stock)
	expect(t, out, Retry, "spill:"+chC.String())
}

// Off by default; compaction and title calls never count; a first-chunk cut counts as a slow call.
func TestSlowSamples(t *testing.T) {
	m := newSim(t, nil)
	for i := 0; i < 10; i++ {
		if out := m.firstToken(chA, 999_999); len(out.Effects) != 0 {
			t.Fatalf("off by default, yet %+v", out.Effects)
		}
	}
	m = slowSim(t, nil)
	for i := 0; i < 5; i++ {
		m.step(StreamCheck{Channel: chA, Purpose: PurposeCompaction, OpenedMs: m.now - 60_000, Chunks: 1, LastChunkMs: m.now, FirstToken: true, FirstTokenMs: 60_000})
	}
	if c := m.s.circuits[chA]; c != nil && c.slow.slow() {
		t.Fatal("compaction calls made the channel slow")
	}
	m = slowSim(t, func(c *Config) { c.Slow.MinCalls = 1; c.Stall.FirstChunkMs = 10_000 })
	m.step(StreamCheck{Channel: chA, OpenedMs: m.now})
	m.advance(10_000)
	out := m.step(StreamCheck{Channel: chA, OpenedMs: m.now - 10_000})
	if out.Verdict.Kind != Cut || slowKinds(out.Effects) != "p/a:closed>slow" {
		t.Fatalf("a first-chunk cut: %+v", out)
	}
	// The breaker on, the stall bounds off: the shim must still be told to report the first chunk.
	m = slowSim(t, func(c *Config) { c.Stall = StallConfig{} })
	if v := m.step(StreamCheck{Channel: chA, OpenedMs: m.now}).Verdict; v.Kind != Watch {
		t.Fatalf("slow on, stall off: %+v, want watch", v)
	}
}

func TestSlowConfigValidation(t *testing.T) {
	for _, tt := range []struct {
		c   SlowConfig
		key string
	}{
		{SlowConfig{FirstTokenMs: 50, MinCalls: 3}, "slow.firstTokenMs"},
		{SlowConfig{FirstTokenMs: 5000, MinCalls: 0}, "slow.minCalls"},
		{SlowConfig{FirstTokenMs: 5000, MinCalls: 1001}, "slow.minCalls"},
	} {
		cfg := DefaultConfig()
		cfg.Slow = tt.c
		err := cfg.Validate()
		if fe, ok := err.(*FieldError); !ok || fe.Key != tt.key {
			t.Errorf("%+v: %v, want an error naming %s", tt.c, err, tt.key)
		}
	}
}

// The snapshot shows the slow state and the estimate; merging never adopts them.
func TestSlowShownInHealth(t *testing.T) {
	m := slowSim(t, nil)
	m.makeSlow(chA)
	got := m.s.SlowHealth()
	if len(got) != 1 || got[0].Channel != chA || got[0].State != Slow || got[0].FirstTokenMs < 5_000 || got[0].UntilMs != m.now+60_000 {
		t.Fatalf("slow health %+v", got)
	}
	other := slowSim(t, nil)
	other.s.Merge(other.now, m.s.Health())
	if v := other.request("new", chA); v.Kind != Pass {
		t.Fatalf("another host adopted slowness: %+v", v)
	}
}

// A chain entry's own slowFirstTokenMs (targets.go) is its threshold, with
// the row's slow breaker off or set otherwise: a flagship behind a gateway
// may take 20 s where a small model taking 6 s is slow.
func TestSlowThresholdPerTarget(t *testing.T) {
	tests := []struct {
		name    string
		rowMs   int64 // the row's slow.firstTokenMs (0: off)
		ownA    int64 // chA's own slowFirstTokenMs (0: none)
		sample  int64 // each of three first tokens on chA
		effects string
		newOn   Channel
	}{
		{"row off, own threshold: slow by its own", 0, 5_000, 6_000, "p/a:closed>slow", chB},
		{"row off, no own threshold: never slow", 0, 0, 60_000, "", chA},
		{"own threshold above the row's: 6 s is not slow for it", 5_000, 20_000, 6_000, "", chA},
		{"own threshold above the row's: 25 s is", 5_000, 20_000, 25_000, "p/a:closed>slow", chB},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := slowSim(t, func(c *Config) {
				c.Slow.FirstTokenMs = tt.rowMs
				if tt.ownA > 0 {
					c.Targets = map[Channel]TargetSettings{chA: {SlowFirstTokenMs: tt.ownA}}
				}
			})
			var fx []Effect
			for i := 0; i < 3; i++ {
				m.advance(1_000)
				fx = append(fx, m.firstToken(chA, tt.sample).Effects...)
			}
			if got := slowKinds(fx); got != tt.effects {
				t.Errorf("transitions %q, want %q", got, tt.effects)
			}
			if got := routedTo(m.request("new", chA), chA); got != tt.newOn {
				t.Errorf("a new session starts on %s, want %s", got, tt.newOn)
			}
		})
	}
}
