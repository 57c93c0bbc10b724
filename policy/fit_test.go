package policy

import (
	"fmt"
	"testing"
)

var (
	chD = Channel{"q", "d"}
	chE = Channel{"r", "e"}
)

// fitSim is a sim whose chain has the given windows (0: none declared),
// each described to the state as the shim does at start.
func fitSim(t *testing.T, windows map[Channel]int64, chain []Channel, mutate func(*Config)) *sim {
	t.Helper()
	m := newSim(t, func(c *Config) {
		c.Chain = chain
		if mutate != nil {
			mutate(c)
		}
	})
	for ch, w := range windows {
		m.step(ModelInfo{Channel: ch, Known: true, ContextWindow: w})
	}
	return m
}

func (m *sim) requestCtx(agent string, proposed Channel, tokens int64) Output {
	return m.step(Request{Agent: agent, Proposed: proposed, ContextTokens: tokens})
}

// The decision table: a session on the 1M primary fails over (QUOTA opens
// it at once) with a context of `tokens`; where does it go, and which
// targets are audited as too small? Usable = window less the 20% reserve.
func TestFailoverSkipsTargetsTooSmallForTheContext(t *testing.T) {
	windows := map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 200_000, chD: 1_000_000}
	chain := []Channel{chA, chB, chC, chD}
	cases := []struct {
		tokens  int64
		verdict VerdictKind
		effects []string
		swapTo  Channel
	}{
		{0, Retry, []string{"circuit:closed>open", "failover:p/b"}, chB},                                         // unknown context: by order
		{50_000, Retry, []string{"circuit:closed>open", "failover:p/b"}, chB},                                    // fits the first fallback
		{102_400, Retry, []string{"circuit:closed>open", "failover:p/b"}, chB},                                   // exactly its usable 80%
		{102_401, Retry, []string{"circuit:closed>open", "too-small:p/b", "failover:q/c"}, chC},                  // one token over
		{300_000, Retry, []string{"circuit:closed>open", "too-small:p/b", "too-small:q/c", "failover:q/d"}, chD}, // only the 1M one
		// Nothing fits: as with no routable fallback, the turn waits for its own channel.
		{900_000, Wait, []string{"circuit:closed>open", "too-small:p/b", "too-small:q/c", "too-small:q/d", "retry"}, Channel{}},
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.tokens), func(t *testing.T) {
			m := fitSim(t, windows, chain, nil)
			m.requestCtx("a1", chA, c.tokens)
			expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), c.verdict, c.effects...)
			if c.verdict != Retry {
				return
			}
			if v := m.requestCtx("a1", chA, c.tokens).Verdict; v.Kind != Swap || v.Channel != c.swapTo {
				t.Errorf("retry routed %+v, want swap to %s", v, c.swapTo)
			}
		})
	}
}

func TestTooSmallAuditCarriesBothNumbers(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 1_000_000}, []Channel{chA, chB, chC}, nil)
	m.requestCtx("a1", chA, 300_000)
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	for _, e := range out.Effects {
		if s, ok := e.(SkippedTooSmall); ok {
			want := SkippedTooSmall{Agent: "a1", Channel: chB, ContextTokens: 300_000, ContextWindow: 128_000, Usable: 102_400}
			if s != want {
				t.Errorf("got %+v, want %+v", s, want)
			}
			return
		}
	}
	t.Errorf("no skipped-too-small in %v", kinds(out.Effects))
}

func TestBackupAndSpillSkipTargetsTooSmall(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 1_000_000, chD: 64_000}, []Channel{chA, chB, chC}, nil)
	m.step(SetBackup{Channel: chD})
	m.requestCtx("a1", chA, 300_000)
	// The spill (two 500s in a row) passes over the 64k backup and the 128k fallback.
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Defer)
	m.requestCtx("a1", chA, 300_000)
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Retry, "too-small:q/d", "too-small:p/b", "spill:q/c")
	if v := m.requestCtx("a1", chA, 300_000).Verdict; v.Channel != chC {
		t.Errorf("spilled request went to %+v, want %s", v, chC)
	}
}

func TestSkippedTargetIsReportedOncePerAgent(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 1_000_000}, []Channel{chA, chB, chC}, func(c *Config) { c.Recovery = Stay })
	m.requestCtx("a1", chA, 300_000)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
	for i := 0; i < 3; i++ {
		if out := m.requestCtx("a1", chA, 300_000); len(out.Effects) > 0 && kinds(out.Effects) != nil {
			for _, k := range kinds(out.Effects) {
				if k == "too-small:p/b" {
					t.Errorf("request %d reported the skip again: %v", i, kinds(out.Effects))
				}
			}
		}
		m.step(Settled{Agent: "a1"})
	}
}

func TestUnknownWindowsRouteByOrder(t *testing.T) {
	m := fitSim(t, nil, []Channel{chA, chB}, nil)
	m.requestCtx("a1", chA, 5_000_000)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "failover:p/b")
}

func TestOwnChannelIsNotSkippedForItsDeclaredWindow(t *testing.T) {
	// The host proposed it: a context too long for it is the host's to compact.
	m := fitSim(t, map[Channel]int64{chA: 128_000, chB: 1_000_000}, []Channel{chA, chB}, nil)
	if v := m.requestCtx("a1", chA, 500_000).Verdict; v.Kind != Pass {
		t.Errorf("own channel skipped: %+v", v)
	}
}

func TestContextExceededFailsOverToALargerWindowWithoutBlame(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 1_000_000}, []Channel{chA, chB, chC}, nil)
	m.requestCtx("a1", chA, 300_000)
	// The primary refuses 300k though it declares 1M: a mis-declared window.
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", llmRetry), Retry, "too-small:p/b", "failover:q/c")
	if len(m.s.Health()) != 0 {
		t.Errorf("a window refusal blamed the channel: %+v", m.s.Health())
	}
	if v := m.requestCtx("a1", chA, 300_000).Verdict; v.Channel != chC {
		t.Errorf("retry went to %+v, want %s", v, chC)
	}
	m.step(Settled{Agent: "a1"})
	// Its next request does not go back to the primary that refused it...
	if v := m.requestCtx("a1", chA, 310_000).Verdict; v.Channel != chC {
		t.Errorf("next request went to %+v, want %s (the primary refused 300k)", v, chC)
	}
	m.step(Settled{Agent: "a1"})
	// ...until the context is below what it refused (compacted).
	if v := m.requestCtx("a1", chA, 100_000).Verdict; v.Kind != Pass {
		t.Errorf("compacted request: %+v, want pass home", v)
	}
	// A new declaration of its window forgets the refusal.
	m.step(ModelInfo{Channel: chA, Known: true, ContextWindow: 2_000_000})
	if _, refused := m.s.refused[chA]; refused {
		t.Error("refusal kept after the window was declared anew")
	}
}

func TestContextExceededWithNothingLargerIsHandedBack(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000}, []Channel{chA, chB}, nil)
	m.requestCtx("a1", chA, 300_000)
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", llmRetry), Delegate, "too-small:p/b", "give-up:no-routable-fallback")
}

func TestContextExceededWithoutTokensNeedsALargerDeclaredWindow(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 128_000, chB: 64_000, chC: 1_000_000}, []Channel{chA, chB, chC}, nil)
	m.request("a1", chA) // the host measured nothing
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", llmRetry), Retry, "too-small:p/b", "failover:q/c")
}

func TestContextExceededReclassifiedKeepsTheOperatorsClass(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000}, []Channel{chA, chB},
		func(c *Config) { c.Classes = map[string]Class{"CONTEXT_WINDOW_EXCEEDED": ClassModelUnavailable} })
	m.requestCtx("a1", chA, 50_000)
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", nil), Retry, "circuit:closed>open", "failover:p/b")
}

func TestPoolRouteChoiceSkipsRoutesTooSmall(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000, chC: 1_000_000}, []Channel{chA}, func(c *Config) {
		c.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}, {Channel: chC}}}}
		c.Quota.Active = true
	})
	m.requestCtx("a1", chA, 300_000)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "too-small:p/b", "failover:q/c")
}

func TestReservePercentIsTheOperatorsToSet(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 1_000_000, chB: 128_000}, []Channel{chA, chB}, func(c *Config) { c.ContextReservePercent = 0 })
	m.requestCtx("a1", chA, 120_000)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "failover:p/b")
}

func TestPerTargetThresholdAndCooldown(t *testing.T) {
	m := newSim(t, func(c *Config) {
		c.SpillAfter = 0
		c.Targets = map[Channel]TargetSettings{chA: {FailureThreshold: 1, CooldownMs: 5_000}}
	})
	m.request("a1", chA)
	// One failure opens the primary (its own threshold), for its own 5 s.
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Retry, "circuit:closed>open", "failover:p/b")
	if c := m.s.circuits[chA]; c.openUntilMs != m.now+5_000 {
		t.Errorf("open until %d, want now+5000", c.openUntilMs-m.now)
	}
	// The fallback keeps the row's threshold of 3.
	m.request("a1", chB)
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Defer)
}

func TestPerTargetSettingsAreValidatedByKey(t *testing.T) {
	cases := []struct {
		t    TargetSettings
		ch   Channel
		want string
	}{
		{TargetSettings{FailureThreshold: 1001}, chB, `"chain[1].failureThreshold"`},
		{TargetSettings{CooldownMs: DefaultMaxCooldownMs + 1}, chA, `"chain[0].cooldownMs"`},
		{TargetSettings{SlowFirstTokenMs: -1}, chA, `"chain[0].slowFirstTokenMs"`},
		{TargetSettings{FailureThreshold: 2}, chC, `"targets"`},
	}
	for _, c := range cases {
		cfg := DefaultConfig()
		cfg.Chain = []Channel{chA, chB}
		cfg.Targets = map[Channel]TargetSettings{c.ch: c.t}
		err := cfg.Validate()
		if err == nil || len(err.Error()) < len(c.want) || err.Error()[:len(c.want)] != c.want {
			t.Errorf("%+v: got %v, want an error naming %s", c.t, err, c.want)
		}
	}
	cfg := DefaultConfig()
	cfg.ContextReservePercent = 95
	if err := cfg.Validate(); err == nil {
		t.Error("a 95% reserve was accepted")
	}
}

func TestAllUnusablePoolAnswersItsFirstRouteThatFits(t *testing.T) {
	m := fitSim(t, map[Channel]int64{chA: 128_000, chB: 64_000, chC: 1_000_000}, []Channel{chA}, func(c *Config) {
		c.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}, {Channel: chC}}}}
		c.Quota.Active, c.Quota.FailOpen = true, false // nothing reported, failOpen off: no route usable
	})
	p := m.s.cfg.pool("team")
	if r, ok := m.s.chooseRoute(m.now, p, Channel{}, fitNeed{tokens: 300_000}); ok || r.Channel != chC {
		t.Errorf("got %s (%v), want the 1M route, unusable", r.Channel, ok)
	}
	if r, _ := m.s.chooseRoute(m.now, p, Channel{}, fitNeed{tokens: 5_000_000}); r.Channel != chA {
		t.Errorf("nothing fits: got %s, want the pool's first route", r.Channel)
	}
}

// A pooled session's request when nothing it may use is routable goes to its
// pool route, unless that route refused as long a context: then to the
// host's own proposal, never into a sure refusal the module chose (issue
// #17, seed 14). Pool: a (200k), b (200k), c (1M, open); the session is on
// route b and proposes a; its context is 423k, beyond a's and b's windows.
func TestPoolFallbackKeepsOffARouteThatRefusedTheContext(t *testing.T) {
	cases := []struct {
		name      string
		refusedAt int64 // the smallest context route b refused (0: none)
		bOpen     bool  // route b is open too
		want      Channel
	}{
		{"route refused as long a context: the proposal", 320_000, false, chA},
		{"route open and refused as long a context: the proposal", 320_000, true, chA},
		// A route too small for the request gives way to the routable proposal
		// (quota.go refitRoute; issue #17, seeds 52 and 54).
		{"route open, refused only longer contexts: the proposal", 500_000, true, chA},
		{"route open, never refused: the proposal", 0, true, chA},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fitSim(t, map[Channel]int64{chA: 200_000, chB: 200_000, chC: 1_000_000}, []Channel{chA}, func(cfg *Config) {
				cfg.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}, {Channel: chC}}}}
				cfg.Quota.Active = true
			})
			if v := m.requestCtx("a1", chA, 100_000).Verdict; v.Kind != Pass {
				t.Fatalf("setup: the session's first request: %+v, want pass on its pool route", v)
			}
			m.step(Settled{Agent: "a1"})
			a := m.s.agents.lookup("a1")
			if a.q.pool != "team" {
				t.Fatalf("setup: the session is in pool %q, want team", a.q.pool)
			}
			a.q.route = Route{Channel: chB} // as a quota move leaves it (seed 14: a quota-routed move)
			var fx []Effect
			m.s.circuit(chC).open(m.now, &m.s.cfg, 0, "test", ClassTransient, &fx)
			if c.bOpen {
				m.s.circuit(chB).open(m.now, &m.s.cfg, 0, "test", ClassTransient, &fx)
			}
			if c.refusedAt > 0 {
				m.s.refused[chB] = c.refusedAt
			}
			v := m.requestCtx("a1", chA, 423_000).Verdict
			got := routeOf(v, chA)
			if got != c.want {
				t.Errorf("went to %s (%+v), want %s", got, v, c.want)
			}
		})
	}
}

// A session running on the user's backup while its pool had nothing usable
// is not on the route its pool named for it (chooseRoute's first route that
// held the request then): when nothing is routable, that route must fit the
// request as any other target, else the request goes to the proposal (the
// backup it is on). The same holds on a pool route: a route the context
// outgrew is the session's own only when the host proposes it (seed 54).
// Issue #17, seed 14 (120 agents, 24 h, 23h8m).
func TestPoolFallbackOffThePoolNeedsTheRouteToFit(t *testing.T) {
	cases := []struct {
		name   string
		routed Channel // where the session's last request went
		tokens int64
		want   Channel
	}{
		{"on the backup, too long for the named route: the backup", chD, 189_000, chD},
		{"on the backup, the named route holds it: the route", chD, 150_000, chA},
		{"on the backup, no context measured: the route", chD, 0, chA},
		// The named route is not its own once outgrown (poolPreferences): the
		// request stays where it runs, which the host proposes and compacts for.
		{"on a pool route, too long for its route: where it runs (the proposal)", chB, 189_000, chB},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fitSim(t, map[Channel]int64{chA: 200_000, chB: 200_000, chC: 1_000_000}, []Channel{chA}, func(cfg *Config) {
				cfg.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}, {Channel: chC}}}}
				cfg.Quota.Active = true
			})
			m.step(SetBackup{Channel: chD})
			if v := m.requestCtx("a1", chA, 10_000).Verdict; v.Kind != Pass {
				t.Fatalf("setup: the session's first request: %+v, want pass on its pool route", v)
			}
			m.step(Settled{Agent: "a1"})
			a := m.s.agents.lookup("a1")
			if a.q.pool != "team" {
				t.Fatalf("setup: the session is in pool %q, want team", a.q.pool)
			}
			a.q.route = Route{Channel: chA} // named by an all-unusable pool (chooseRoute)
			a.routed = m.s.intern(c.routed)
			var fx []Effect
			for _, ch := range []Channel{chA, chB, chC, chD} {
				m.s.circuit(ch).open(m.now, &m.s.cfg, 0, "test", ClassTransient, &fx)
			}
			// The host proposes where the session is (the web host's last route).
			v := m.requestCtx("a1", c.routed, c.tokens).Verdict
			got := routeOf(v, c.routed)
			if got != c.want {
				t.Errorf("went to %s (%+v), want %s", got, v, c.want)
			}
		})
	}
}

// A pool route chosen while the context was short is not the session's own
// once the context outgrows it: the request goes to the proposal (a pool
// route the host compacts for), else to a usable route that holds it, never
// back into the small route when its circuit closes. Issue #17, seed 54 (120
// agents, 24 h, 23m10s): a 36k session proposing its 64k home went to its
// 32k pool route. Pool: a (32k), b (64k), c (1M); the session's route is a.
func TestPoolRouteOutgrownGivesWay(t *testing.T) {
	cases := []struct {
		name      string
		tokens    int64
		proposed  Channel
		refusedAt int64   // the smallest context b refused (0: none)
		routed    Channel // where its last request went (zero: b, its home)
		noReports bool    // no readings and failOpen off: route choice finds nothing usable
		want      Channel
		openC     bool // the 1M route's circuit is open
	}{
		{"the route holds it: the route", 20_000, chB, 0, Channel{}, false, chA, false},
		{"outgrown: the proposal", 36_000, chB, 0, Channel{}, false, chB, false},
		{"outgrown, beyond the proposal's reserve: the proposal (the host's to compact)", 60_000, chB, 0, Channel{}, false, chB, false},
		{"outgrown, the proposal refused as long: the route that holds it", 60_000, chB, 50_000, Channel{}, false, chC, false},
		// A low reading alone never moves a running session (seed 52, 4h43m).
		{"outgrown, the proposal refused, runs on a route that holds it, none usable for new sessions: where it runs", 60_000, chB, 50_000, chC, true, chC, false},
		// An outgrown route is spared nothing (poolPreferences): 60k on the
		// 32k route is a sure refusal, the 1M route is routable, if not
		// usable for a new session.
		{"outgrown, the proposal refused, nothing usable for new sessions: a routable route that holds it", 60_000, chB, 50_000, Channel{}, true, chC, false},
		{"outgrown, the proposal refused, nothing routable that holds it: the proposal (the host's failure to hand back)", 60_000, chB, 50_000, Channel{}, true, chB, true},
		{"no context measured: the route", 0, chB, 0, Channel{}, false, chA, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := fitSim(t, map[Channel]int64{chA: 32_000, chB: 64_000, chC: 1_000_000}, []Channel{chA}, func(cfg *Config) {
				cfg.Pools = []Pool{{Name: "team", Routes: []Route{{Channel: chA}, {Channel: chB}, {Channel: chC}}}}
				cfg.Quota.Active = true
			})
			if v := m.requestCtx("a1", chB, 7_000).Verdict; v.Kind != Pass {
				t.Fatalf("setup: the session's first request: %+v, want pass on its home", v)
			}
			m.step(Settled{Agent: "a1"})
			a := m.s.agents.lookup("a1")
			if a.q.pool != "team" {
				t.Fatalf("setup: pool %q, want team", a.q.pool)
			}
			a.q.route = Route{Channel: chA} // as route choice under a low reading on b's provider left it (seed 54)
			if c.refusedAt > 0 {
				m.s.refused[chB] = c.refusedAt
			}
			if !c.routed.IsZero() {
				a.routed = m.s.intern(c.routed)
			}
			m.s.cfg.Quota.FailOpen = !c.noReports
			if c.openC {
				var fx []Effect
				m.s.circuit(chC).open(m.now, &m.s.cfg, 0, "test", ClassTransient, &fx)
			}
			out := m.requestCtx("a1", c.proposed, c.tokens)
			v := out.Verdict
			got := routeOf(v, c.proposed)
			if got != c.want {
				t.Errorf("went to %s (%+v), want %s", got, v, c.want)
			}
			// Every route change is said: a move off the outgrown route with its cause.
			moved := a.q.route.Channel != chA
			var said *QuotaRouted
			for _, e := range out.Effects {
				if r, ok := e.(QuotaRouted); ok && r.Cause == CauseOutgrown {
					said = &r
				}
			}
			if moved != (said != nil) || said != nil && (said.From.Channel != chA || said.To.Channel != a.q.route.Channel) {
				t.Errorf("route moved %v to %s, said %+v", moved, a.q.route.Channel, said)
			}
		})
	}
}
