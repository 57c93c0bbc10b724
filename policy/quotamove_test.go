package policy

import "testing"

// The seed's three promises about a quota failure's move (issue #35): a move
// takes a low route before waiting, the switch covers the move as much as
// the wait, and pool `off` never changes provider, a chain or not.

// A move takes "the first route in declared order that is not out of
// allowance and clears its own threshold, or failing that any route that is
// merely not out of allowance". Pool [A, B(, C)], A fails with a 402.
func TestQuotaMoveTakesALowRouteBeforeWaiting(t *testing.T) {
	type reading struct {
		provider  string
		remaining float64
	}
	for _, tc := range []struct {
		name     string
		routes   []Route
		failOpen bool
		readings []reading
		marks    []string
		want     VerdictKind
		to       Channel // with Retry
	}{
		{"B under its minimum (2 < 5): moved to B, no wait", []Route{rA, rB}, true, []reading{{"pb", 2}}, nil, Retry, rB.Channel},
		{"B clears its threshold: B", []Route{rA, rB}, true, []reading{{"pb", 9}}, nil, Retry, rB.Channel},
		{"B low, C clears: the threshold first (C)", []Route{rA, rB, rC}, true, []reading{{"pb", 2}, {"pc", 9}}, nil, Retry, rC.Channel},
		{"B and C both low: declared order (B)", []Route{rA, rB, rC}, true, []reading{{"pb", 2}, {"pc", 1}}, nil, Retry, rB.Channel},
		{"B reads nothing left (0): out of allowance, the wait", []Route{rA, rB}, true, []reading{{"pb", 0}}, nil, Wait, Channel{}},
		{"B marked: out of allowance, the wait", []Route{rA, rB}, true, []reading{{"pb", 2}}, []string{"pb"}, Wait, Channel{}},
		{"failOpen off, B unread: nothing vouches for it, the wait", []Route{rA, rB}, false, nil, nil, Wait, Channel{}},
		{"failOpen off, B low: something is left, B", []Route{rA, rB}, false, []reading{{"pb", 2}}, nil, Retry, rB.Channel},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) {
				c.Pools[0].Routes = tc.routes
				c.Quota.FailOpen = tc.failOpen
				c.Quota.Balances = []Balance{
					{Provider: "pb", Script: []string{"b.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000, MinimumRemaining: 5},
					{Provider: "pc", Script: []string{"c.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000, MinimumRemaining: 5},
				}
			})
			for _, r := range tc.readings {
				m.reading(r.provider, true, r.remaining)
			}
			for _, p := range tc.marks {
				m.s.mark(m.now, p, 0, "QUOTA", new([]Effect))
			}
			if v := m.request("s1", rA.Channel); v.Kind != Pass {
				t.Fatalf("first request: %+v", v)
			}
			out := m.quotaFail("s1", "pa", "HTTP_402", "Insufficient Balance")
			if out.Verdict.Kind != tc.want {
				t.Fatalf("verdict %+v, want %s", out.Verdict, tc.want)
			}
			if tc.want != Retry {
				return
			}
			if r := effectsOf[QuotaRouted](out); len(r) != 1 || r[0].To.Channel != tc.to {
				t.Fatalf("routed %+v, want to %s", r, tc.to)
			}
			if v := m.request("s1", rA.Channel); routeOf(v, rA.Channel) != tc.to {
				t.Fatalf("the retry went to %+v, want %s", v, tc.to)
			}
		})
	}

	// The same rule before a request is sent: another session's 402 marked A;
	// a session on A is moved to the low B, not sent into the mark.
	m := quotaSim(t, func(c *Config) {
		c.Pools[0].Routes = []Route{rA, rB}
		c.Quota.Balances = []Balance{{Provider: "pb", Script: []string{"b.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000, MinimumRemaining: 5}}
	})
	m.reading("pb", true, 2)
	m.request("s1", rA.Channel)
	m.step(Settled{Agent: "s1"}) // its answer came before the mark: no news of A's allowance after it
	m.request("s2", rA.Channel)
	m.quotaFail("s2", "pa", "HTTP_402", "")
	if v := m.request("s1", rA.Channel); routeOf(v, rA.Channel) != rB.Channel {
		t.Fatalf("a running session on the marked A: %+v, want the low B", v)
	}
}

// The switch covers the move as much as the wait: off, a quota failure of a
// pooled session is neither moved within the pool nor waited out. It goes
// to the engine's ordinary handling: along the chain when there is one, else
// back to the host.
func TestQuotaSwitchCoversTheMove(t *testing.T) {
	chX := Channel{"px", "m1"}
	for _, tc := range []struct {
		name    string
		chain   []Channel
		mode    SwitchMode
		defOn   bool
		want    VerdictKind
		to      Channel // with Retry
		giveUp  GiveUpReason
		waiting bool
	}{
		{"switch on: moved to B", nil, SwitchOn, true, Retry, rB.Channel, "", false},
		{"switch off, no chain: back to the host", nil, SwitchOff, true, Delegate, Channel{}, NoRoutableFallback, false},
		{"switch off, a chain: along the chain, never the pool", []Channel{rA.Channel, chX}, SwitchOff, true, Retry, chX, "", false},
		{"opt-in deployment, switch untouched: back to the host", nil, SwitchDefault, false, Delegate, Channel{}, NoRoutableFallback, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) {
				c.Chain = tc.chain
				c.Pools[0].Routes = []Route{rA, rB}
				c.Quota.DefaultEnabled = tc.defOn
			})
			m.step(SetQuota{Agent: "s1", Mode: tc.mode})
			if v := m.request("s1", rA.Channel); v.Kind != Pass {
				t.Fatalf("first request: %+v", v)
			}
			out := m.quotaFail("s1", "pa", "HTTP_402", "Insufficient Balance")
			if out.Verdict.Kind != tc.want {
				t.Fatalf("verdict %+v, want %s (effects %+v)", out.Verdict, tc.want, out.Effects)
			}
			if w := effectsOf[QuotaWait](out); len(w) != 0 {
				t.Fatalf("a long-term wait: %+v", w)
			}
			if tc.mode != SwitchOn && len(effectsOf[QuotaRouted](out)) != 0 {
				t.Fatalf("moved within the pool with the switch off: %+v", out.Effects)
			}
			switch tc.want {
			case Retry:
				if v := m.request("s1", rA.Channel); routeOf(v, rA.Channel) != tc.to {
					t.Fatalf("the retry went to %+v, want %s", v, tc.to)
				}
			case Delegate:
				if g := effectsOf[GaveUp](out); len(g) != 1 || g[0].Reason != tc.giveUp {
					t.Fatalf("gave up %+v, want %s", g, tc.giveUp)
				}
			}
		})
	}

	// Off before a request: a session on a provider another session's 402
	// marked is not moved within its pool either.
	m := quotaSim(t, func(c *Config) { c.Pools[0].Routes = []Route{rA, rB} })
	m.step(SetQuota{Agent: "s1", Mode: SwitchOff})
	m.request("s1", rA.Channel)
	m.step(Settled{Agent: "s1"})
	m.request("s2", rA.Channel)
	m.quotaFail("s2", "pa", "HTTP_402", "")
	if v := m.request("s1", rA.Channel); routeOf(v, rA.Channel) == rB.Channel {
		t.Fatalf("switch off, moved to B before the request: %+v", v)
	}
}

// Pool `off`: "This session never changes provider. An exhausted allowance
// is waited out where it is". With a chain too: a 402 waits on the provider
// it failed on, the retry goes there, and only the switch off hands the
// failure to the chain's ordinary handling.
func TestPoolOffNeverChangesProviderWithAChain(t *testing.T) {
	chX := Channel{"px", "m1"}
	for _, tc := range []struct {
		name string
		mode SwitchMode
		want VerdictKind
		to   Channel
	}{
		{"switch on: the wait, on A", SwitchOn, Wait, rA.Channel},
		{"switch off: the chain's failover", SwitchOff, Retry, chX},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) { c.Chain = []Channel{rA.Channel, chX} })
			m.step(SetPool{Agent: "s1", Mode: PoolOff})
			m.step(SetQuota{Agent: "s1", Mode: tc.mode})
			if v := m.request("s1", rA.Channel); v.Kind != Pass {
				t.Fatalf("first request: %+v", v)
			}
			out := m.quotaFail("s1", "pa", "HTTP_402", "Insufficient Balance")
			if out.Verdict.Kind != tc.want {
				t.Fatalf("verdict %+v, want %s", out.Verdict, tc.want)
			}
			if tc.want == Wait {
				if len(effectsOf[FailedOver](out)) != 0 || len(effectsOf[QuotaWait](out)) != 1 {
					t.Fatalf("pool off: %+v", out.Effects)
				}
				m.advance(out.Verdict.DelayMs)
			}
			if v := m.request("s1", rA.Channel); routeOf(v, rA.Channel) != tc.to {
				t.Fatalf("the retry went to %+v, want %s", v, tc.to)
			}
			if tc.want != Wait {
				return
			}
			// Another failure kind still walks the chain: the mark ends (a success), then a 500.
			m.step(Settled{Agent: "s1"})
			m.advance(10)
			m.request("s1", rA.Channel)
			m.advance(10)
			if v := m.request("s2", rA.Channel); v.Kind != Pass {
				t.Fatalf("after the success, a new session: %+v", v)
			}
		})
	}
	// A session that never chose off, on the same chain, fails over along it (unchanged).
	m := quotaSim(t, func(c *Config) { c.Chain = []Channel{rA.Channel, chX}; c.Pools = nil })
	m.request("s1", rA.Channel)
	if out := m.quotaFail("s1", "pa", "HTTP_402", ""); out.Verdict.Kind != Retry {
		t.Fatalf("default pool, a chain: %+v", out.Verdict)
	}
}

// A forked or delegated session's settings taken from its ancestor are
// reported `inherited` (the seed's source), until the session sets its own
// or goes back to the default.
func TestInheritedSettingsAreSaidSo(t *testing.T) {
	for _, tc := range []struct {
		name          string
		events        []Event
		enabledSource SettingSource
		pool          string
		poolSource    SettingSource
	}{
		{"nothing set", nil, SourceDefault, "main", SourceInferred},
		{"inherited switch and pool", []Event{SetQuota{Agent: "c", Mode: SwitchOff, Inherited: true}, SetPool{Agent: "c", Mode: PoolNamed, Pool: "main", Inherited: true}},
			SourceInherited, "main", SourceInherited},
		{"inherited off", []Event{SetPool{Agent: "c", Mode: PoolOff, Inherited: true}}, SourceDefault, "", SourceOff},
		{"its own setting after", []Event{SetQuota{Agent: "c", Mode: SwitchOff, Inherited: true}, SetQuota{Agent: "c", Mode: SwitchOn},
			SetPool{Agent: "c", Mode: PoolNamed, Pool: "main", Inherited: true}, SetPool{Agent: "c", Mode: PoolNamed, Pool: "main"}},
			SourceSession, "main", SourceSession},
		{"default clears it, never re-inherits", []Event{SetQuota{Agent: "c", Mode: SwitchOff, Inherited: true}, SetQuota{Agent: "c", Mode: SwitchDefault},
			SetPool{Agent: "c", Mode: PoolNamed, Pool: "main", Inherited: true}, SetPool{Agent: "c", Mode: PoolDefault}},
			SourceDefault, "main", SourceInferred},
		{"an unknown pool changes nothing, the inheritance included", []Event{SetPool{Agent: "c", Mode: PoolNamed, Pool: "main", Inherited: true},
			SetPool{Agent: "c", Mode: PoolNamed, Pool: "nope"}}, SourceDefault, "main", SourceInherited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, nil)
			m.request("c", rA.Channel)
			for _, e := range tc.events {
				m.step(e)
			}
			s := m.s.QuotaReport(m.now, "c").Session
			if s.EnabledSource != tc.enabledSource || s.Pool != tc.pool || s.PoolSource != tc.poolSource {
				t.Fatalf("session %+v, want %s, pool %q (%s)", s.QuotaSession, tc.enabledSource, tc.pool, tc.poolSource)
			}
		})
	}
}

// With the switch off a spent allowance walks the chain as with no quota
// rules, and that walk's recovery clock starts at this failure: with the
// chain's other channel open for a minute, the turn waits for it, well
// inside giveUpAfterMs. It gave up at once (recovery-timeout): the quota
// branch ran before the clock was started, and the wait counted from 0.
// The simulator found it (seed 16, 4 h, 40 agents: a session, its switch
// off, gave up on a 402 while the chain's primary was back 2 minutes later).
func TestQuotaSwitchOffWaitsForTheChain(t *testing.T) {
	chX := Channel{"px", "m1"}
	m := quotaSim(t, func(c *Config) {
		c.Chain = []Channel{chX, rA.Channel}
		c.Pools[0].Routes = []Route{rA, rB}
	})
	m.step(SetQuota{Agent: "s1", Mode: SwitchOff})
	for i := 0; i < 5 && m.state(chX) == Closed; i++ {
		m.step(Request{Agent: "tripper", Proposed: chX})
		m.step(RequestError{Agent: "tripper", Provider: chX.Provider, Failure: Failure{Code: "RATE_LIMIT", Message: "slow down"}, Phase: AfterHost, HostRetry: stock})
	}
	if m.state(chX) != Open {
		t.Fatalf("could not open %v", chX)
	}
	if v := m.request("s1", rA.Channel); v.Kind != Pass {
		t.Fatalf("first request: %+v", v)
	}
	out := m.quotaFail("s1", "pa", "HTTP_402", "Insufficient Balance")
	if g := effectsOf[GaveUp](out); len(g) != 0 {
		t.Fatalf("gave up: %+v", g)
	}
	if out.Verdict.Kind != Wait || out.Verdict.DelayMs <= 0 || out.Verdict.DelayMs > m.s.cfg.GiveUpAfterMs {
		t.Fatalf("verdict %+v, want a wait for %v (effects %+v)", out.Verdict, chX, out.Effects)
	}
}
