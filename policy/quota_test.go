package policy

import (
	"errors"
	"strings"
	"testing"
)

var (
	rA = Route{Channel: Channel{"pa", "m1"}}
	rB = Route{Channel: Channel{"pb", "m1"}, ReasoningEffort: "high"}
	rC = Route{Channel: Channel{"pc", "m1"}}
)

// quotaSim is a sim with one pool "main" of routes A, B, C on three providers
// and a balance script on each of pa and pb.
func quotaSim(t *testing.T, mutate func(*Config)) *sim {
	t.Helper()
	return newSim(t, func(c *Config) {
		c.Chain = nil
		c.Probes = false
		c.Pools = []Pool{{Name: "main", Routes: []Route{rA, rB, rC}}}
		c.Quota.Active = true
		c.Quota.LongTermDelayMs = 2_000
		c.Quota.Balances = []Balance{
			{Provider: "pa", Script: []string{"a.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000, MinimumRemaining: 5},
			{Provider: "pb", Script: []string{"b.sh"}, TimeoutMs: 1_000, RefreshMs: 10_000},
		}
		if mutate != nil {
			mutate(c)
		}
	})
}

func (m *sim) quotaFail(agent, provider, code, msg string) Output {
	return m.step(RequestError{Agent: agent, Provider: provider, Failure: Failure{Code: code, Message: msg}, Phase: BeforeHost})
}

func (m *sim) reading(provider string, ok bool, remaining float64) Output {
	return m.step(BalanceReading{Provider: provider, OK: ok, Remaining: remaining})
}

func effectsOf[T Effect](out Output) []T {
	var r []T
	for _, fx := range out.Effects {
		if e, ok := fx.(T); ok {
			r = append(r, e)
		}
	}
	return r
}

// Route choice: marks first, then readings against minimumRemaining, then
// failOpen; declared order breaks ties; an all-unusable pool answers its first route.
func TestRouteChoice(t *testing.T) {
	type setup func(m *sim)
	markA := func(m *sim) { m.s.mark(m.now, "pa", 0, "QUOTA", new([]Effect)) }
	markB := func(m *sim) { m.s.mark(m.now, "pb", 0, "QUOTA", new([]Effect)) }
	markC := func(m *sim) { m.s.mark(m.now, "pc", 0, "QUOTA", new([]Effect)) }
	read := func(p string, ok bool, n float64) setup { return func(m *sim) { m.reading(p, ok, n) } }
	tests := []struct {
		name     string
		failOpen bool
		setups   []setup
		want     Route
		usable   bool
	}{
		{"nothing known: declared order", true, nil, rA, true},
		{"a reading with allowance beats no reading", true, []setup{read("pb", true, 100)}, rB, true},
		{"A marked: next usable", true, []setup{markA}, rB, true},
		{"A below minimumRemaining (5)", true, []setup{read("pa", true, 4)}, rB, true},
		{"A at exactly the minimum is usable", true, []setup{read("pa", true, 5)}, rA, true},
		{"a reading of 0 shows no allowance", true, []setup{read("pb", true, 0), markA}, rC, true},
		{"a missing reading counts as nothing reported", true, []setup{read("pa", false, 0)}, rA, true},
		{"failOpen off: only a reading makes a route usable", false, []setup{read("pb", true, 9)}, rB, true},
		{"failOpen off, nothing reported: the first route, unusable", false, nil, rA, false},
		{"everything marked: the first route, unusable", true, []setup{markA, markB, markC}, rA, false},
		{"two readings with allowance: declared order", true, []setup{read("pa", true, 50), read("pb", true, 500)}, rA, true},
		{"A unservable (the host has no adapter for it)", true, []setup{func(m *sim) {
			m.step(ModelInfo{Channel: rA.Channel, Known: false, Code: "NO_ADAPTER"})
		}}, rB, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) { c.Quota.FailOpen = tt.failOpen })
			for _, s := range tt.setups {
				s(m)
			}
			got, usable, known := m.s.PickRoute(m.now, "main")
			if !known || got != tt.want || usable != tt.usable {
				t.Fatalf("PickRoute = %v usable %v, want %v usable %v", got.Channel, usable, tt.want.Channel, tt.usable)
			}
		})
	}
	m := quotaSim(t, nil)
	if _, _, known := m.s.PickRoute(m.now, "nope"); known {
		t.Fatal("an unknown pool must not answer a route")
	}
}

// Marks: a quota failure opens the provider for exhaustedCooldownMs (or the
// provider's reset time when longer); a reading lifts it only when taken one
// refresh interval after the mark and showing allowance.
func TestExhaustionMarksAndTheirLapse(t *testing.T) {
	const cool = 60_000
	tests := []struct {
		name       string
		retryAfter int64
		after      int64   // ms after the mark when the reading comes (-1: none)
		ok         bool    // the reading's OK
		remaining  float64 // and its value
		at         int64   // ms after the mark to check
		marked     bool
	}{
		{"fresh mark", 0, -1, false, 0, 0, true},
		{"lapses after the cooldown", 0, -1, false, 0, cool, false},
		{"still marked just before", 0, -1, false, 0, cool - 1, true},
		{"a reset time beyond the cooldown extends it", 5 * cool, -1, false, 0, 2 * cool, true},
		{"a reading with allowance one refresh after lifts it", 0, 10_000, true, 50, 10_000, false},
		{"a reading with allowance too soon does not", 0, 9_999, true, 50, 9_999, true},
		{"a reading below the minimum does not", 0, 10_000, true, 4, 10_000, true},
		{"a missing reading does not", 0, 10_000, false, 0, 10_000, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) { c.Quota.ExhaustedCooldownMs = cool })
			start := m.now
			out := m.step(RequestError{Agent: "x", Provider: "pa", Phase: BeforeHost,
				Failure: Failure{Code: "HTTP_402", Message: "Insufficient Balance", RetryAfterMs: tt.retryAfter}})
			_ = out // the agent routed nothing: the engine leaves it to the host
			m.s.mark(start, "pa", tt.retryAfter, "HTTP_402", new([]Effect))
			if tt.after >= 0 {
				m.now = start + tt.after
				out := m.reading("pa", tt.ok, tt.remaining)
				lifted := len(effectsOf[CircuitChanged](out)) > 0
				if lifted == tt.marked {
					t.Fatalf("reading lifted the mark: %v, want %v", lifted, !tt.marked)
				}
			}
			if got := m.s.marked(start+tt.at, "pa"); got != tt.marked {
				t.Fatalf("marked at +%d = %v, want %v", tt.at, got, tt.marked)
			}
		})
	}
}

// An exhaustion mark travels in its provider's health record: another
// process (a restart, a second host) takes it with the record, by version
// like any breaker, so it keeps new sessions off until it lapses; a lapsed
// mark says nothing; a record that wins without a mark (the lift) ends it.
func TestMarksTravelWithHealth(t *testing.T) {
	one := quotaSim(t, nil)
	start := one.now
	one.request("s1", rA.Channel)
	one.step(RequestError{Agent: "s1", Provider: "pa", Phase: BeforeHost,
		Failure: Failure{Code: "HTTP_402", Message: "Insufficient Balance", RetryAfterMs: 7_200_000}}) // beyond the exhausted cooldown: the provider's reset
	var rec ChannelHealth
	for _, h := range one.s.Health() {
		if h.Channel == (Channel{"pa", providerModel}) {
			rec = h
		}
	}
	if rec.MarkedAtMs != start || rec.State != Open || rec.OpenUntilMs != start+7_200_000 || rec.LastCode != "HTTP_402" {
		t.Fatalf("the provider record carries no mark: %+v", rec)
	}

	two := quotaSim(t, nil)
	two.now = start + 1_000
	if n, _ := two.s.Merge(two.now, []ChannelHealth{rec}); n != 1 {
		t.Fatalf("adopted %d", n)
	}
	if !two.s.marked(two.now, "pa") {
		t.Fatal("the mark did not come with the record")
	}
	if r := two.s.QuotaReport(two.now, ""); r.Providers[0].MarkedAtMs != start || r.Providers[0].MarkedUntilMs != start+7_200_000 {
		t.Fatalf("report: %+v", r.Providers[0])
	}
	if v := two.request("s2", rA.Channel); v.Kind != Swap || v.Channel != rB.Channel {
		t.Fatalf("a shared mark keeps new sessions off: %+v", v)
	}

	tests := []struct {
		name   string
		rec    func(h ChannelHealth) ChannelHealth
		marked bool
	}{
		{"an older record without the mark changes nothing", func(h ChannelHealth) ChannelHealth {
			h.Version, h.MarkedAtMs = h.Version-1, 0
			return h
		}, true},
		{"a lapsed mark is no mark", func(h ChannelHealth) ChannelHealth {
			h.Version, h.OpenUntilMs = h.Version+1, start+500
			return h
		}, false},
		{"a mark from a clock ahead is read as now", func(h ChannelHealth) ChannelHealth {
			h.Version, h.MarkedAtMs = h.Version+2, start+5_000
			return h
		}, true},
		{"a later record without a mark (the lift) ends it", func(h ChannelHealth) ChannelHealth {
			h.Version, h.State, h.MarkedAtMs, h.OpenUntilMs = h.Version+3, Closed, 0, 0
			return h
		}, false},
	}
	for _, tt := range tests {
		m := quotaSim(t, nil)
		m.now = start + 1_000
		m.s.Merge(m.now, []ChannelHealth{rec})
		out := m.step(Wake{})
		m.s.Merge(m.now, []ChannelHealth{tt.rec(rec)})
		if len(effectsOf[CircuitChanged](out)) != 0 {
			t.Fatalf("%s: a merged mark is news, not a transition: %+v", tt.name, out.Effects)
		}
		if got := m.s.marked(m.now, "pa"); got != tt.marked {
			t.Fatalf("%s: marked %v, want %v", tt.name, got, tt.marked)
		}
		if b := m.s.providers["pa"].breaker; b.markedAtMs > m.now {
			t.Fatalf("%s: marked at %d, after now %d", tt.name, b.markedAtMs, m.now)
		}
	}
	two.advance(7_200_000)
	if two.s.marked(two.now, "pa") {
		t.Fatal("the shared mark lapses at its time")
	}
}

// Refresh rules: every script runs at once, then one refresh interval after
// its last run started; one in flight is not started again until its timeout
// (plus slack) has passed; a reading ends the run.
func TestBalanceRefreshRules(t *testing.T) {
	m := quotaSim(t, nil)
	refreshes := func(out Output) []string {
		var ps []string
		for _, r := range effectsOf[RefreshBalance](out) {
			ps = append(ps, r.Provider)
		}
		return ps
	}
	steps := []struct {
		name    string
		advance int64
		ev      Event
		want    []string
		wakeAt  int64 // the ScheduleRefresh it asks for, relative to the start; -1 none
	}{
		{"first step: every script is due", 0, Wake{}, []string{"pa", "pb"}, 1_000 + refreshSlackMs},
		{"in flight: nothing again", 500, Wake{}, nil, -1},
		{"pa answers: next at +10 s", 300, BalanceReading{Provider: "pa", OK: true, Remaining: 9}, nil, -1},
		{"pb's run is given up after its timeout and slack", 5_200, Wake{}, []string{"pb"}, 10_000},
		{"pa due one interval after its run started", 4_000, Wake{}, []string{"pa"}, 6_000 + 1_000 + refreshSlackMs},
		{"a reading for a provider without a script is ignored", 10, BalanceReading{Provider: "zz", OK: true, Remaining: 1}, nil, -1},
	}
	start := m.now
	for _, s := range steps {
		m.advance(s.advance)
		out := m.step(s.ev)
		if got := refreshes(out); strings.Join(got, ",") != strings.Join(s.want, ",") {
			t.Fatalf("%s: refreshes %v, want %v", s.name, got, s.want)
		}
		if s.wakeAt >= 0 {
			w := effectsOf[ScheduleRefresh](out)
			if len(w) != 1 || w[0].AtMs != start+s.wakeAt {
				t.Fatalf("%s: schedule %+v, want at +%d", s.name, w, s.wakeAt)
			}
		}
	}
	// Staleness, for pickRoute's refresh-first: older than the refresh interval, or never read.
	b := m.s.cfg.balance("pa")
	if m.s.stale(m.now, b) {
		t.Fatal("a reading younger than refreshMs is fresh")
	}
	if !m.s.stale(m.now+10_000, b) {
		t.Fatal("a reading refreshMs old is stale")
	}
}

// Pool inference: the one pool holding the route; none or two infer nothing.
func TestPoolInference(t *testing.T) {
	shared := Route{Channel: Channel{"ps", "m"}}
	cfg := Config{Pools: []Pool{
		{Name: "one", Routes: []Route{rA, shared}},
		{Name: "two", Routes: []Route{rB, shared}},
	}}
	tests := []struct {
		on   Channel
		want string
	}{
		{rA.Channel, "one"},
		{rB.Channel, "two"},
		{shared.Channel, ""}, // in both: ambiguous
		{rC.Channel, ""},     // in none
		{Channel{"pa", "other"}, ""},
	}
	for _, tt := range tests {
		got := ""
		if p := cfg.InferPool(tt.on); p != nil {
			got = p.Name
		}
		if got != tt.want {
			t.Errorf("InferPool(%s) = %q, want %q", tt.on, got, tt.want)
		}
	}
}

func TestPoolNames(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"main", true}, {"team-b", true}, {"plan2", true}, {"a", true},
		{"", false}, {"Main", false}, {"team_b", false}, {"a b", false}, {"池", false}, {strings.Repeat("a", 65), false},
	}
	for _, w := range ReservedPoolNames() {
		tests = append(tests, struct {
			name string
			ok   bool
		}{w, false})
	}
	for _, tt := range tests {
		if ok, why := ValidPoolName(tt.name); ok != tt.ok {
			t.Errorf("ValidPoolName(%q) = %v (%s), want %v", tt.name, ok, why, tt.ok)
		}
	}
	if len(ReservedPoolNames()) != 9 {
		t.Fatalf("reserved names: %v", ReservedPoolNames())
	}
}

// The spent-allowance wording behind each code a provider hides it under.
func TestQuotaWording(t *testing.T) {
	tests := []struct {
		name string
		f    Failure
	}{
		{"403 EN five-hour window", Failure{Code: "AUTH", Status: 403, Message: "You have used up your 5-hour usage window. Try again later."}},
		{"403 EN usage limit", Failure{Code: "AUTH", Status: 403, Message: "Forbidden: usage limit exceeded for your plan"}},
		{"403 ZH window", Failure{Code: "AUTH", Status: 403, Message: "您已达到本时段用量上限"}},
		{"429 ZH Token Plan", Failure{Code: "RATE_LIMIT", Status: 429, Message: "已达到 Token Plan 用量上限，请稍后再试"}},
		{"429 EN Token Plan", Failure{Code: "RATE_LIMIT", Status: 429, Message: "You have reached your usage limit for this billing period."}},
		{"429 pi-ai, no status", Failure{Code: "PI_AI_ERROR", Message: "429 已达到 Token Plan 用量上限"}},
		{"402 EN balance", Failure{Code: "HTTP_402", Status: 402, Message: "Insufficient Balance"}},
		{"402 ZH balance", Failure{Code: "HTTP_402", Status: 402, Message: "账户余额不足，请充值"}},
		{"402 bare", Failure{Code: "HTTP_402", Status: 402}},
		{"402 unknown code", Failure{Code: "PI_AI_ERROR", Status: 402, Message: "Payment Required"}},
	}
	for _, tt := range tests {
		if got := Classify(tt.f); got != ClassQuota {
			t.Errorf("%s: class %s, want quota", tt.name, got)
		}
	}
	// The words that are not a spent allowance stay what they are.
	for _, f := range []Failure{
		{Code: "RATE_LIMIT", Status: 429, Message: "请求过于频繁，请稍后再试"},
		{Code: "AUTH", Status: 403, Message: "invalid api key"},
		{Code: "RATE_LIMIT", Status: 429, Message: "Rate limit reached for requests"},
	} {
		if Classify(f) == ClassQuota {
			t.Errorf("%q is not a spent allowance", f.Message)
		}
	}
}

func TestQuotaConfigValidation(t *testing.T) {
	ok := func(c *Config) {}
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
	}{
		{"defaults", ok, ""},
		{"reserved pool name", func(c *Config) { c.Pools = []Pool{{Name: "off", Routes: []Route{rA}}} }, "pools[0].name"},
		{"upper case pool name", func(c *Config) { c.Pools = []Pool{{Name: "Main", Routes: []Route{rA}}} }, "pools[0].name"},
		{"duplicate pool", func(c *Config) { c.Pools = []Pool{{Name: "x", Routes: []Route{rA}}, {Name: "x", Routes: []Route{rB}}} }, "pools[1].name"},
		{"empty pool", func(c *Config) { c.Pools = []Pool{{Name: "x"}} }, "pools[0].routes"},
		{"route without model", func(c *Config) { c.Pools = []Pool{{Name: "x", Routes: []Route{{Channel: Channel{"p", ""}}}}} }, "pools[0].routes[0].model"},
		{"duplicate route", func(c *Config) { c.Pools = []Pool{{Name: "x", Routes: []Route{rA, rA}}} }, "pools[0].routes[1]"},
		{"delay above a timer's reach", func(c *Config) { c.Quota.LongTermDelayMs = MaxLongTermDelayMs + 1 }, "quota.longTermDelayMs"},
		{"delay at a timer's reach", func(c *Config) { c.Quota.LongTermDelayMs = MaxLongTermDelayMs }, ""},
		{"zero cooldown", func(c *Config) { c.Quota.ExhaustedCooldownMs = 0 }, "quota.exhaustedCooldownMs"},
		{"script as a shell line is still argv[0]; empty is refused", func(c *Config) {
			c.Quota.Balances = []Balance{{Provider: "p", Script: []string{""}, TimeoutMs: 1000, RefreshMs: 1000}}
		}, "quota.balances[0].script"},
		{"negative minimum", func(c *Config) {
			c.Quota.Balances = []Balance{{Provider: "p", Script: []string{"x"}, TimeoutMs: 1000, RefreshMs: 1000, MinimumRemaining: -1}}
		}, "quota.balances[0].minimumRemaining"},
		{"two scripts for one provider", func(c *Config) {
			b := Balance{Provider: "p", Script: []string{"x"}, TimeoutMs: 1000, RefreshMs: 1000}
			c.Quota.Balances = []Balance{b, b}
		}, "quota.balances[1].provider"},
		{"the credential as a literal env", func(c *Config) {
			c.Quota.Balances = []Balance{{Provider: "p", Script: []string{"x"}, TimeoutMs: 1000, RefreshMs: 1000, APIKeyEnv: "K", Env: []EnvVar{{"K", "v"}}}}
		}, "quota.balances[0].env[0].name"},
		{"bad apiKeyEnv", func(c *Config) {
			c.Quota.Balances = []Balance{{Provider: "p", Script: []string{"x"}, TimeoutMs: 1000, RefreshMs: 1000, APIKeyEnv: "A-B"}}
		}, "quota.balances[0].apiKeyEnv"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.mutate(&c)
		err := c.Validate()
		var fe *FieldError
		switch {
		case tt.key == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.key != "" && (!errors.As(err, &fe) || fe.Key != tt.key):
			t.Errorf("%s: error %v, want one naming %s", tt.name, err, tt.key)
		}
	}
}

// A 402 on route A with a pool: the provider is marked, the agent fails over
// to B at once, and its next request goes to B with B's own effort.
func TestQuotaFailoverWithinThePool(t *testing.T) {
	m := quotaSim(t, nil)
	m.step(ModelInfo{Channel: rB.Channel, Known: true, Efforts: []string{"low", "high"}})
	if v := m.request("s1", rA.Channel); v.Kind != Pass {
		t.Fatalf("first request: %+v", v)
	}
	out := m.quotaFail("s1", "pa", "HTTP_402", "Insufficient Balance")
	expect(t, out, Retry, "circuit:closed>open", "failover:pb/m1")
	if r := effectsOf[QuotaRouted](out); len(r) != 1 || r[0].To != rB || r[0].Pool != "main" {
		t.Fatalf("routed: %+v", r)
	}
	v := m.request("s1", rA.Channel)
	if v.Kind != Swap || v.Channel != rB.Channel || v.ReasoningEffort != "high" {
		t.Fatalf("next request: %+v, want swap to B with effort high", v)
	}
	// A new session on A is moved to B before its request is sent.
	if v := m.request("s2", rA.Channel); v.Kind != Swap || v.Channel != rB.Channel {
		t.Fatalf("new session on the marked provider: %+v", v)
	}
}

// The whole pool exhausted: a long-term wait, retried once per delay with no
// attempt limit and no giveUpAfterMs, left when a retry goes through.
func TestLongTermWait(t *testing.T) {
	m := quotaSim(t, func(c *Config) { c.Pools[0].Routes = []Route{rA, rB}; c.GiveUpAfterMs = 1_000 })
	m.request("s1", rA.Channel)
	expect(t, m.quotaFail("s1", "pa", "HTTP_402", ""), Retry, "circuit:closed>open", "failover:pb/m1")
	m.request("s1", rA.Channel)
	out := m.quotaFail("s1", "pb", "RATE_LIMIT", "已达到 Token Plan 用量上限")
	expect(t, out, Wait, "circuit:closed>open", "retry")
	if out.Verdict.DelayMs != 2_000 || !out.Verdict.Held {
		t.Fatalf("delay %d, held %v: a long-term wait is held", out.Verdict.DelayMs, out.Verdict.Held)
	}
	w := effectsOf[QuotaWait](out)
	if len(w) != 1 || w[0].Phase != WaitEntered || w[0].Attempts != 1 || w[0].Pool != "main" {
		t.Fatalf("wait: %+v", w)
	}
	for i := 2; i <= 20; i++ { // far past giveUpAfterMs and maxFailovers: no give-up
		m.advance(2_000)
		if v := m.request("s1", rA.Channel); v.Kind != Pass && v.Channel != rA.Channel {
			t.Fatalf("retry %d goes to %+v, want the pool's first route", i, v)
		}
		out := m.quotaFail("s1", "pa", "HTTP_402", "")
		if out.Verdict.Kind != Wait {
			t.Fatalf("attempt %d: %+v", i, out.Verdict)
		}
		if w := effectsOf[QuotaWait](out); len(w) != 1 || w[0].Phase != WaitWaiting || w[0].Attempts != i {
			t.Fatalf("attempt %d: %+v", i, w)
		}
	}
	if r := m.s.QuotaReport(m.now, "s1"); r.Session.Wait == nil || r.Session.Wait.Attempts != 20 {
		t.Fatalf("report: %+v", r.Session)
	}
	m.advance(2_000)
	m.request("s1", rA.Channel)
	out = m.step(Settled{Agent: "s1"})
	if w := effectsOf[QuotaWait](out); len(w) != 1 || w[0].Phase != WaitLeft || w[0].Reason != LeftRecovered {
		t.Fatalf("left: %+v", w)
	}
	if m.s.marked(m.now, "pa") {
		t.Fatal("a success after the mark closes it")
	}
}

// The switch: off during a wait leaves it (disabled); off before a failure
// gives the engine's handling; a cancelled wait keeps its entry.
func TestQuotaSwitch(t *testing.T) {
	m := quotaSim(t, func(c *Config) { c.Pools[0].Routes = []Route{rA} })
	m.request("s1", rA.Channel)
	expect(t, m.quotaFail("s1", "pa", "HTTP_402", ""), Wait, "circuit:closed>open", "retry")
	// A cancel is the shim's business: the entry stays until a success or the switch.
	m.step(Settled{Agent: "s1"})
	if m.s.agents.lookup("s1").q.wait == nil {
		t.Fatal("an idle agent after a cancelled wait keeps the entry")
	}
	out := m.step(SetQuota{Agent: "s1", Mode: SwitchOff})
	if w := effectsOf[QuotaWait](out); len(w) != 1 || w[0].Reason != LeftDisabled {
		t.Fatalf("off during the wait: %+v", out.Effects)
	}
	if s := effectsOf[QuotaSession](out); len(s) != 1 || s[0].Enabled || s[0].EnabledSource != SourceSession {
		t.Fatalf("session: %+v", s)
	}
	// Off: the engine's handling (nothing routable, a bounded wait).
	m.advance(100)
	m.request("s1", rA.Channel)
	out = m.quotaFail("s1", "pa", "HTTP_402", "")
	if len(effectsOf[QuotaWait](out)) != 0 {
		t.Fatalf("switch off still entered a long-term wait: %+v", out)
	}
	if s := effectsOf[QuotaSession](m.step(SetQuota{Agent: "s1", Mode: SwitchDefault})); !s[0].Enabled || s[0].EnabledSource != SourceDefault {
		t.Fatalf("default: %+v", s)
	}
	// Opt-in: defaultEnabled false, a session turns it on.
	m2 := quotaSim(t, func(c *Config) { c.Quota.DefaultEnabled = false; c.Pools[0].Routes = []Route{rA} })
	m2.request("s1", rA.Channel)
	if len(effectsOf[QuotaWait](m2.quotaFail("s1", "pa", "HTTP_402", ""))) != 0 {
		t.Fatal("opt-in: no wait without the switch")
	}
	m2.step(SetQuota{Agent: "s2", Mode: SwitchOn})
	m2.advance(10)
	m2.request("s2", rA.Channel)
	if w := effectsOf[QuotaWait](m2.quotaFail("s2", "pa", "HTTP_402", "")); len(w) != 1 {
		t.Fatal("opt-in: the switch turns the wait on")
	}
}

// The per-session pool: choosing one picks a route at once (the next request
// uses it); off never changes provider; default infers.
func TestSessionPool(t *testing.T) {
	other := Route{Channel: Channel{"px", "m"}}
	m := quotaSim(t, func(c *Config) {
		c.Pools = append(c.Pools, Pool{Name: "spare", Routes: []Route{other}})
	})
	m.request("s1", rA.Channel)
	out := m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "spare"})
	if s := effectsOf[QuotaSession](out); s[0].Pool != "spare" || s[0].PoolSource != SourceSession || s[0].Route != other {
		t.Fatalf("session: %+v", s)
	}
	if v := m.request("s1", rA.Channel); v.Kind != Swap || v.Channel != other.Channel {
		t.Fatalf("next request: %+v", v)
	}
	// Unknown pool: nothing changes.
	out = m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "nope"})
	if s := effectsOf[QuotaSession](out); s[0].Pool != "spare" {
		t.Fatalf("unknown pool changed the session: %+v", s)
	}
	// Off: a quota failure never moves it; with the switch on it waits.
	m.step(SetPool{Agent: "s1", Mode: PoolOff})
	if v := m.request("s1", rA.Channel); v.Kind != Pass {
		t.Fatalf("pool off: %+v", v)
	}
	out = m.quotaFail("s1", "pa", "HTTP_402", "")
	if out.Verdict.Kind != Wait || len(effectsOf[FailedOver](out)) != 0 {
		t.Fatalf("pool off moved the session: %+v", out)
	}
	// Default: inferred from the route the session is on.
	out = m.step(SetPool{Agent: "s1", Mode: PoolDefault})
	if s := effectsOf[QuotaSession](out); s[0].Pool != "main" || s[0].PoolSource != SourceInferred {
		t.Fatalf("default: %+v", s)
	}
}

// A low reading keeps new sessions off a provider, never moves a running one.
func TestLowReadingNeverMovesARunningSession(t *testing.T) {
	m := quotaSim(t, nil)
	m.request("s1", rA.Channel)
	m.reading("pa", true, 1) // below pa's minimum of 5
	if v := m.request("s1", rA.Channel); v.Kind != Pass {
		t.Fatalf("running session moved by a reading: %+v", v)
	}
	if r, _, _ := m.s.PickRoute(m.now, "main"); r != rB {
		t.Fatalf("a new session gets %v, want B", r.Channel)
	}
	if v := m.request("s3", rA.Channel); v.Kind != Swap || v.Channel != rB.Channel {
		t.Fatalf("a new session proposing the low provider: %+v, want B", v)
	}
	out := m.step(SetPool{Agent: "s2", Mode: PoolNamed, Pool: "main"})
	if s := effectsOf[QuotaSession](out); s[0].Route != rB {
		t.Fatalf("a session put into the pool: %+v", s)
	}
}

// Without pools or quota the engine's quota handling is unchanged.
func TestQuotaRulesOffWithoutPoolsOrQuota(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Probes = false; c.ProviderThreshold = 0 })
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "HTTP_402", "Insufficient Balance", nil)
	expect(t, out, Retry, "circuit:closed>open", "failover:p/b")
}
