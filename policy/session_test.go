package policy

import "testing"

var chX = Channel{"px", "picked"} // in no pool, on no chain

// routeOf is the channel a request's verdict sends it to.
func routeOf(v Verdict, proposed Channel) Channel {
	if v.Kind == Swap {
		return v.Channel
	}
	return proposed
}

// A user's explicit pick (a proposal the plugin did not route, unlike the
// last one) is honoured until they pick again or choose a pool; the plugin's
// own moves and a fixed selection are no pick.
func TestUserPickInAPool(t *testing.T) {
	type req struct {
		proposed, want Channel
	}
	for _, tc := range []struct {
		name  string
		setup func(m *sim)
		reqs  []req
	}{
		{"a pick outside the pool answers, again and again", nil,
			[]req{{rA.Channel, rA.Channel}, {chX, chX}, {chX, chX}}},
		{"a pick of another route of the pool answers", nil,
			[]req{{rA.Channel, rA.Channel}, {rC.Channel, rC.Channel}, {rC.Channel, rC.Channel}}},
		{"a named pool's session picks too", func(m *sim) { m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "main"}) },
			[]req{{rA.Channel, rA.Channel}, {chX, chX}}},
		{"choosing a pool ends the pick", func(m *sim) {
			m.request("s1", rA.Channel)
			m.request("s1", chX)
			m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "main"})
		}, []req{{chX, rA.Channel}, {chX, rA.Channel}}},
		{"going back to the default ends it", func(m *sim) {
			m.request("s1", rA.Channel)
			m.request("s1", rC.Channel)
			m.step(SetPool{Agent: "s1", Mode: PoolDefault})
		}, []req{{rC.Channel, rC.Channel}}},
		{"a fixed selection after the plugin's own move is no pick", func(m *sim) {
			m.request("s1", rA.Channel)
			m.quotaFail("s1", "pa", "HTTP_402", "") // moved to a route of the pool
		}, []req{{rA.Channel, rB.Channel}, {rA.Channel, rB.Channel}}},
		{"the host proposing the plugin's own route is no pick", func(m *sim) {
			m.request("s1", rA.Channel)
			m.quotaFail("s1", "pa", "HTTP_402", "")
		}, []req{{rB.Channel, rB.Channel}, {rB.Channel, rB.Channel}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, nil)
			if tc.setup != nil {
				tc.setup(m)
			}
			for i, r := range tc.reqs {
				if got := routeOf(m.request("s1", r.proposed), r.proposed); got != r.want {
					t.Fatalf("request %d proposing %s went to %s, want %s", i, r.proposed, got, r.want)
				}
			}
		})
	}
}

// A picked channel that fails moves within the pick's pool, and the pick is
// still first once it is usable again.
func TestUserPickFailsOverAndComesBack(t *testing.T) {
	m := quotaSim(t, nil)
	m.request("s1", rA.Channel)
	m.request("s1", rC.Channel) // the pick
	out := m.quotaFail("s1", "pc", "HTTP_402", "")
	if out.Verdict.Kind != Retry {
		t.Fatalf("a failed pick: %+v", out)
	}
	if got := routeOf(m.request("s1", rC.Channel), rC.Channel); got == rC.Channel {
		t.Fatalf("a marked pick was routed to")
	}
	m.advance(DefaultExhaustedCooldownMs + 1)
	if got := routeOf(m.request("s1", rC.Channel), rC.Channel); got != rC.Channel {
		t.Fatalf("after its mark lapsed, went to %s, want the pick back", got)
	}
}

// What a restarted host needs reaches the shell: the home with each
// FailedOver, the pick with SessionRoute. A session at home costs nothing.
func TestSessionRouteEffects(t *testing.T) {
	m := quotaSim(t, nil)
	steps := []struct {
		name       string
		ev         Event
		home, pick Channel // of the SessionRoute, or the FailedOver's home
		want       string  // "none", "route" or "failover"
	}{
		{"at home", Request{Agent: "s1", Proposed: rA.Channel}, Channel{}, Channel{}, "none"},
		{"again", Request{Agent: "s1", Proposed: rA.Channel}, Channel{}, Channel{}, "none"},
		{"a pick", Request{Agent: "s1", Proposed: rC.Channel}, rC.Channel, rC.Channel, "route"},
		{"the pick fails over", RequestError{Agent: "s1", Provider: "pc", Failure: Failure{Code: "HTTP_402"}, Phase: BeforeHost}, rC.Channel, Channel{}, "failover"},
		{"away from the pick", Request{Agent: "s1", Proposed: rC.Channel}, Channel{}, Channel{}, "none"},
		{"the pool again", SetPool{Agent: "s1", Mode: PoolDefault}, rC.Channel, Channel{}, "route"},
	}
	for _, st := range steps {
		out := m.step(st.ev)
		r, f := effectsOf[SessionRoute](out), effectsOf[FailedOver](out)
		switch st.want {
		case "none":
			if len(r) != 0 {
				t.Fatalf("%s: %+v", st.name, r)
			}
		case "route":
			if len(r) != 1 || r[0].Home != st.home || r[0].Pick != st.pick {
				t.Fatalf("%s: %+v, want home %s pick %s", st.name, r, st.home, st.pick)
			}
		case "failover":
			if len(f) != 1 || f[0].Home != st.home {
				t.Fatalf("%s: %+v, want home %s", st.name, f, st.home)
			}
		}
	}
}

// Readings steer a new chain session as they steer a pool session: it never
// starts on a provider whose fresh reading is below its minimum while
// another is usable. A running session is not moved by a reading.
func TestReadingsSteerNewChainSessions(t *testing.T) {
	for _, tc := range []struct {
		name    string
		reading float64
		ok      bool
		age     int64
		want    Channel
	}{
		{"below the minimum: the next in the chain", 0, true, 0, chC},
		{"at the minimum: stays", 1, true, 0, chA},
		{"a missing reading says nothing", 0, false, 0, chA},
		{"a stale reading says nothing", 0, true, 10_000, chA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) {
				c.Chain = []Channel{chA, chC}
				c.Probes = false
				c.Quota.Active = true
				c.Quota.Balances = []Balance{{Provider: "p", Script: []string{"p.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000, MinimumRemaining: 1}}
			})
			m.request("running", chA)
			m.reading("p", tc.ok, tc.reading)
			m.advance(tc.age)
			if got := routeOf(m.request("new", chA), chA); got != tc.want {
				t.Fatalf("a new session went to %s, want %s", got, tc.want)
			}
			// Its next request stays where it started: that is its home now.
			if got := routeOf(m.request("new", chA), chA); got != tc.want {
				t.Fatalf("its next request went to %s, want %s", got, tc.want)
			}
			if tc.age == 0 {
				if got := routeOf(m.request("running", chA), chA); got != chA {
					t.Fatalf("a running session moved by a reading to %s", got)
				}
			}
		})
	}
}

// A session's home survives a restart: restored before its first request,
// the session on its sticky failover route goes back home, and says so.
func TestHomeSurvivesRestart(t *testing.T) {
	for _, tc := range []struct {
		name     string
		restore  bool
		want     Channel
		returned bool
	}{
		{"restored: back home, a return", true, chA, true},
		{"not restored: the proposed route is home", false, chB, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := newSim(t, nil)
			before.step(Request{Agent: "s1", Proposed: chA})
			saved := effectsOf[FailedOver](before.fail("s1", BeforeHost, "QUOTA", "", llmRetry)) // failover to B
			before.request("s1", chA)                                                            // the retry, sent to B
			if v := before.request("s1", chB); v.Kind != Pass {                                  // then the host proposes B
				t.Fatalf("on B: %+v", v)
			}
			if len(saved) != 1 || saved[0].Home != chA {
				t.Fatalf("home to persist: %+v", saved)
			}
			after := newSim(t, nil) // a new process: A's breaker is closed again
			after.now = before.now
			if tc.restore {
				after.step(RestoreRoute{Agent: "s1", Home: saved[0].Home})
			}
			out := after.step(Request{Agent: "s1", Proposed: chB}) // the host proposes the route it last used
			if got := routeOf(out.Verdict, chB); got != tc.want {
				t.Fatalf("first request after the restart went to %s, want %s", got, tc.want)
			}
			if r := effectsOf[Returned](out); (len(r) == 1) != tc.returned || tc.returned && (r[0].From != chB || r[0].To != chA) {
				t.Fatalf("returned: %+v", r)
			}
		})
	}
}

// An empty chain keeps the same-channel retries of a transient code the host
// does not retry (a reconnect user wants them), and never reroutes: once its
// budget or the breaker stops them, the failure goes back to the host.
func TestEmptyChainRetriesTheSameChannelOnly(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = nil; c.FailureThreshold = 3 })
	m.request("a1", chA)
	for i := 1; i <= 2; i++ {
		out := m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry)
		expect(t, out, Wait, "retry")
		if r := effectsOf[Retrying](out); r[0].Channel != chA {
			t.Fatalf("retry %d on %s", i, r[0].Channel)
		}
		if v := m.request("a1", chA); v.Kind != Pass {
			t.Fatalf("retry %d rerouted: %+v", i, v)
		}
	}
	expect(t, m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry), Delegate, "circuit:closed>open", "give-up:no-routable-fallback")
	// A code the host retries itself is the host's alone: no plugin wait on top.
	m2 := newSim(t, func(c *Config) { c.Chain = nil })
	m2.request("a1", chA)
	expect(t, m2.fail("a1", BeforeHost, "RATE_LIMIT", "", llmRetry), Defer)
}

// A new session whose home is open starts elsewhere with no failover: its
// home still reaches the shell, once, and goes with its return.
func TestHomeOfASessionStartedAway(t *testing.T) {
	m := newSim(t, nil)
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", llmRetry) // A opens
	out := m.step(Request{Agent: "a2", Proposed: chA})
	if r := effectsOf[SessionRoute](out); out.Verdict.Channel != chB || len(r) != 1 || r[0].Home != chA {
		t.Fatalf("started away: %+v", out)
	}
	if r := effectsOf[SessionRoute](m.step(Request{Agent: "a2", Proposed: chA})); len(r) != 0 {
		t.Fatalf("the shell holds it already: %+v", r)
	}
	m.advance(DefaultCooldownMs + 1)
	out = m.step(Request{Agent: "a2", Proposed: chA})
	if r := effectsOf[Returned](out); len(r) != 1 || r[0].From != chB || r[0].To != chA {
		t.Fatalf("back home: %+v", out)
	}
}

// A quota failure of a session whose pick lies outside every pool, while it
// is on a pool's route (the chain's failover took it there), moves it where
// its next request will go: the pick's preferences, the chain. A move within
// the route's pool, which the next request ignored, sent every retry back to
// the exhausted provider, each one a failover past maxFailovers (sim
// bench-day seed 1, failover-budget).
func TestQuotaFailureOfAPickOutsideThePools(t *testing.T) {
	for _, recovery := range []Recovery{Return, Stay} {
		t.Run(string(recovery), func(t *testing.T) {
			m := quotaSim(t, func(c *Config) {
				c.Chain = []Channel{chX, rA.Channel}
				c.Recovery = recovery
			})
			m.request("s1", rA.Channel)
			m.request("s1", chX) // the pick, outside the pool
			m.step(ModelInfo{Channel: chX, Known: false, Code: "NO_ADAPTER"})
			proposed := chX
			for i := range 4 {
				target := routeOf(m.request("s1", proposed), proposed)
				if i > 0 && target == rA.Channel {
					t.Fatalf("request %d went back to %s, whose provider is marked exhausted", i, target)
				}
				if target != rA.Channel {
					return
				}
				out := m.quotaFail("s1", "pa", "HTTP_402", "")
				if out.Verdict.Kind == Wait {
					return // nothing on its preferences is usable: held
				}
				if fo := effectsOf[FailedOver](out); len(fo) == 1 {
					proposed = fo[0].From // the host proposes the route its log last used
				}
			}
		})
	}
}

func TestSessionsReturnHomeOrStay(t *testing.T) {
	for _, tc := range []struct {
		recovery Recovery
		want     Channel
	}{{Return, chA}, {Stay, chB}} {
		t.Run(string(tc.recovery), func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.Recovery = tc.recovery })
			openA(m)             // a1 fails over to b
			m.request("a1", chA) // the host proposes a; swapped to b
			m.step(Settled{Agent: "a1"})
			m.advance(DefaultCooldownMs)
			m.step(Wake{})
			m.step(ProbeResult{Channel: chA, OK: true})
			// The host now proposes b: its last request header.
			v := m.request("a1", chB)
			got := chB
			if v.Kind == Swap {
				got = v.Channel
			}
			if got != tc.want {
				t.Fatalf("after recovery the agent is on %s, want %s", got, tc.want)
			}
		})
	}
}
