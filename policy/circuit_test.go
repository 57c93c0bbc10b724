package policy

import (
	"slices"
	"strings"
	"testing"
)

// openA trips chA with a quota failure of agent a1 at the sim's now.
func openA(m *sim) {
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
}

func TestHalfOpenAdmitsExactlyOneProbe(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 10_000 })
	openA(m)
	m.advance(9_999)
	if v := m.request("a2", chA); v.Kind != Swap {
		t.Fatalf("still cooling down: %+v", v)
	}
	m.advance(1)
	out := m.step(Request{Agent: "probe", Proposed: chA})
	expect(t, out, Pass, "circuit:open>half-open")
	for _, agent := range []string{"x", "y", "z"} {
		if v := m.request(agent, chA); v.Kind != Swap || v.Channel != chB {
			t.Fatalf("%s was admitted beside the probe: %+v", agent, v)
		}
	}
}

func TestProbeSuccessCloses(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 10_000 })
	openA(m)
	m.advance(10_000)
	m.request("probe", chA)
	expect(t, m.step(Settled{Agent: "probe"}), Pass, "circuit:half-open>closed")
	if v := m.request("anyone", chA); v.Kind != Pass {
		t.Fatalf("closed channel not used: %+v", v)
	}
}

func TestProbeFailureReopensAtOnceWithoutWaitingForTheHost(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 10_000 })
	openA(m)
	m.advance(10_000)
	m.request("probe", chA)
	// A transient failure before the host's retries: the channel is not closed, so act now.
	expect(t, m.fail("probe", BeforeHost, "RATE_LIMIT", "", llmRetry), Retry, "circuit:half-open>open", "failover:p/b")
}

func TestProbeSlotIsFreedWhenItsProbeSaysNothing(t *testing.T) {
	for name, end := range map[string]func(m *sim){
		"disposed": func(m *sim) { m.step(Disposed{Agent: "probe"}) },
		"aborted":  func(m *sim) { m.fail("probe", AfterHost, "ABORTED", "", nil) },
		"lease expired": func(m *sim) {
			m.advance(probeLeaseMs)
		},
	} {
		t.Run(name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.CooldownMs = 10_000 })
			openA(m)
			m.advance(10_000)
			m.request("probe", chA)
			end(m)
			if v := m.request("next", chA); v.Kind != Pass {
				t.Fatalf("the probe slot stayed taken: %+v", v)
			}
		})
	}
}

func TestHealthRoundTripsAndHalfOpenPersistsAsDue(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 10_000 })
	openA(m)
	m.advance(10_000)
	m.request("probe", chA) // half-open, probe in flight
	h := m.s.Health()
	if len(h) != 1 || h[0].State != Open || h[0].OpenUntilMs > m.now {
		t.Fatalf("health %+v: want open and due", h)
	}
	fresh, _ := NewState(m.s.Config())
	if _, skipped := fresh.Merge(m.now, h); skipped != nil {
		t.Fatal(skipped)
	}
	// A restarted host probes again instead of trusting the lost probe.
	if out := Step(fresh, m.now, Request{Agent: "new", Proposed: chA}); out.Verdict.Kind != Pass {
		t.Fatalf("restored channel not probed: %+v", out)
	}
}

func TestMergeSkipsBadRecords(t *testing.T) {
	long := strings.Repeat("x", MaxHealthNameLen+1)
	for _, tc := range []struct {
		name string
		bad  ChannelHealth
		key  string
	}{
		{"no model", ChannelHealth{Channel: Channel{Provider: "p"}, State: Open}, "channels[0].channel"},
		{"no provider", ChannelHealth{Channel: Channel{Model: providerModel}, State: Open}, "channels[0].channel"},
		{"unknown state", ChannelHealth{Channel: chC, State: "ajar"}, "channels[0].state"},
		{"oversized provider", ChannelHealth{Channel: Channel{Provider: long, Model: "m"}, State: Open}, "channels[0].channel"},
		{"oversized model", ChannelHealth{Channel: Channel{Provider: "p", Model: long}, State: Open}, "channels[0].channel"},
		{"oversized code", ChannelHealth{Channel: chC, State: Open, LastCode: strings.Repeat("E", MaxHealthCodeLen+1)}, "channels[0].lastCode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := NewState(DefaultConfig())
			good := ChannelHealth{Channel: chA, State: Open, OpenUntilMs: 90_000, ChangedAtMs: 1_000}
			n, skipped := s.Merge(0, []ChannelHealth{tc.bad, good})
			if n != 1 || len(skipped) != 1 {
				t.Fatalf("adopted %d, skipped %v: want the good record taken and the bad one skipped", n, skipped)
			}
			if fe, ok := skipped[0].(*FieldError); !ok || fe.Key != tc.key {
				t.Fatalf("skipped %v: want it to name %q", skipped[0], tc.key)
			}
			if h := s.Health(); len(h) != 1 || h[0].Channel != chA {
				t.Fatalf("health %+v: want only the good record", h)
			}
		})
	}
}

// A request sent before the channel was tripped (by another agent or host)
// and answering afterwards is stale evidence: it does not close the breaker.
func TestAStaleSuccessDoesNotCloseTheBreaker(t *testing.T) {
	m := newSim(t, nil)
	m.request("slow", chA) // sent while a is healthy
	m.advance(1_000)
	openA(m) // a1 trips a meanwhile
	m.advance(1_000)
	expect(t, m.step(Settled{Agent: "slow"}), Pass)
	if m.state(chA) != Open {
		t.Fatalf("a success sent before the trip closed the channel: %s", m.state(chA))
	}
	// A request admitted after the trip is evidence: the half-open probe.
	m.advance(DefaultCooldownMs)
	m.request("probe", chA)
	expect(t, m.step(Settled{Agent: "probe"}), Pass, "circuit:half-open>closed")
}

// A provider breaker's open time ends like a channel's: after it, a
// transient failure on another of its models is the host's to retry, not an
// instant failover.
func TestProviderBreakerExpires(t *testing.T) {
	chZ := Channel{"p", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chZ, chC}; c.Probes = false })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "circuit:closed>open", "failover:q/c")
	m.advance(10 * 60_000)
	m.request("a2", chZ)
	expect(t, m.fail("a2", BeforeHost, "SERVER", "", llmRetry), Defer, "circuit:open>half-open")
}

func TestBurstWindowForgetsOldFailures(t *testing.T) {
	m := newSim(t, func(c *Config) { c.FailureThreshold = 2; c.BurstWindowMs = 10_000; c.SpillAfter = 0 })
	m.request("a1", chA)
	if out := m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry); out.Verdict.Held {
		t.Fatal("an ordinary wait is not held: only a long-term quota wait is")
	} else {
		expect(t, out, Wait, "retry")
	}
	m.advance(10_001) // the next failure starts a new burst
	m.request("a1", chA)
	expect(t, m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry), Wait, "retry")
	m.advance(1_000) // within the window: the second of this burst opens it
	m.request("a1", chA)
	expect(t, m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry), Retry, "circuit:closed>open", "failover:p/b")
}

func TestProviderOpensWhenEnoughModelsAreOpen(t *testing.T) {
	other := Channel{"p", "z"} // not in the chain: only the provider circuit keeps it away
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderThreshold = 2 })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
	if v := m.request("a2", other); v.Kind != Pass {
		t.Fatalf("one model open must not close the provider: %+v", v)
	}
	m.request("a1", chA) // on b
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	expect(t, out, Retry, "circuit:closed>open", "circuit:closed>open", "failover:q/c")
	if cc := out.Effects[1].(CircuitChanged); cc.Channel != (Channel{"p", "*"}) || cc.Cause != "models-open" {
		t.Fatalf("second transition: %+v, want the provider p opening", cc)
	}
	if v := m.request("a3", other); v.Kind != Swap || v.Channel != chC {
		t.Fatalf("a third model of the open provider: %+v, want swap to q/c", v)
	}
	// Any model of the provider answering closes it again.
	m.advance(DefaultCooldownMs)
	m.request("a4", other)
	if out := m.step(Settled{Agent: "a4"}); len(out.Effects) == 0 {
		t.Fatal("a success under the provider did not close it")
	}
	if v := m.request("a5", other); v.Kind != Pass {
		t.Fatalf("provider still avoided after a success: %+v", v)
	}
}

func TestCooldownGrowsWhileTheOutageLastsAndResetsOnClose(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 1_000; c.MaxCooldownMs = 3_000; c.Probes = true })
	openFor := func() int64 {
		t.Helper()
		for _, fx := range m.step(Wake{}).Effects {
			if _, ok := fx.(Probe); ok {
				out := m.step(ProbeResult{Channel: chA, Failure: Failure{Code: "QUOTA"}})
				return out.Effects[0].(CircuitChanged).OpenUntilMs - m.now
			}
		}
		t.Fatal("no probe at the wake")
		return 0
	}
	openA(m)
	var got []int64
	for i := 0; i < 4; i++ {
		m.advance(10_000)
		got = append(got, openFor())
	}
	if want := []int64{2_000, 3_000, 3_000, 3_000}; !slices.Equal(got, want) {
		t.Fatalf("cooldowns %v, want %v (doubling, capped)", got, want)
	}
	m.advance(10_000)
	m.step(Wake{})
	m.step(ProbeResult{Channel: chA, OK: true})
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	if d := out.Effects[0].(CircuitChanged).OpenUntilMs - m.now; d != 1_000 {
		t.Fatalf("after a close the cooldown starts over: %d", d)
	}
}

func TestProviderCooldownOfItsOwn(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cooldown int64
		until    int64 // after the second model opens
	}{
		{"0: as long as its longest open model", 0, DefaultCooldownMs},
		{"its own open time", 5 * DefaultCooldownMs, 5 * DefaultCooldownMs},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderCooldownMs = tt.cooldown })
			for _, ch := range []Channel{chA, chB} {
				m.step(Request{Agent: "a-" + ch.Model, Proposed: ch})
				m.step(RequestError{Agent: "a-" + ch.Model, Provider: "p", Failure: Failure{Code: "QUOTA"}, Phase: BeforeHost, HostRetry: stock})
			}
			p := m.s.providerBreaker("p")
			if p == nil || p.state != Open || p.openUntilMs != m.now+tt.until {
				t.Fatalf("provider p: %+v, want open until now+%d", p, tt.until)
			}
		})
	}
}
