package policy

import "testing"

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
	if _, err := fresh.Merge(m.now, h); err != nil {
		t.Fatal(err)
	}
	// A restarted host probes again instead of trusting the lost probe.
	if out := Step(fresh, m.now, Request{Agent: "new", Proposed: chA}); out.Verdict.Kind != Pass {
		t.Fatalf("restored channel not probed: %+v", out)
	}
}

func TestRestoreRejectsBadRecords(t *testing.T) {
	s, _ := NewState(DefaultConfig())
	for _, h := range [][]ChannelHealth{
		{{Channel: Channel{Provider: "p"}, State: Open}},
		{{Channel: chA, State: "ajar"}},
	} {
		if _, err := s.Merge(0, h); err == nil {
			t.Errorf("accepted %+v", h)
		}
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
