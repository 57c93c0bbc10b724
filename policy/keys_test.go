package policy

import "testing"

// The keys dsh-model-failover and dsh-reconnect users relied on
// (probeMaxTokens, providerCooldownMs, stripReasoningEffort, persistent).

func TestForcedEffortStripDropsWhatTheTargetLists(t *testing.T) {
	tests := []struct {
		name  string
		strip []Channel
		drops bool
	}{
		{"not named: kept where listed", nil, false},
		{"the target named", []Channel{chB}, true},
		{"its provider named with *", []Channel{{"p", "*"}}, true},
		{"another target named", []Channel{chC}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.StripReasoningEffort = tt.strip })
			m.step(ModelInfo{Channel: chB, Known: true, Efforts: []string{"high"}})
			openA(m)
			out := m.step(Request{Agent: "a1", Proposed: chA, ReasoningEffort: "high"})
			if out.Verdict.Kind != Swap || out.Verdict.DropReasoningEffort != tt.drops {
				t.Fatalf("%+v, want a swap dropping the effort: %v", out.Verdict, tt.drops)
			}
		})
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

func TestConfigRefusesBadNewKeys(t *testing.T) {
	for _, tt := range []struct {
		key    string
		mutate func(*Config)
	}{
		{"probeMaxTokens", func(c *Config) { c.ProbeMaxTokens = 0 }},
		{"probeMaxTokens", func(c *Config) { c.ProbeMaxTokens = MaxProbeMaxTokens + 1 }},
		{"providerCooldownMs", func(c *Config) { c.ProviderCooldownMs = -1 }},
		{"stripReasoningEffort[0]", func(c *Config) { c.StripReasoningEffort = []Channel{{"p", ""}} }},
		{"stripReasoningEffort[1]", func(c *Config) { c.StripReasoningEffort = []Channel{chA, chA} }},
	} {
		c := DefaultConfig()
		tt.mutate(&c)
		err := c.Validate()
		if fe, ok := err.(*FieldError); !ok || fe.Key != tt.key {
			t.Errorf("%s: got %v", tt.key, err)
		}
	}
}

// Persistent: a transient outage on the only channel is retried past
// giveUpAfterMs and past the breaker's threshold, each wait a Retrying
// (an llm/retry row) capped at backoffMaxMs, and never given up.
func TestPersistentRetriesTheOnlyChannelIndefinitely(t *testing.T) {
	m := newSim(t, func(c *Config) {
		c.Chain, c.Persistent, c.BackoffMaxMs, c.GiveUpAfterMs = nil, true, PersistentBackoffMaxMs, 60_000
	})
	m.request("a1", chA)
	for i := 0; i < 200; i++ {
		out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "STREAM_CLOSED"}, Phase: AfterHost, HostRetry: llmRetry, Rand: uint64(i) << 45})
		if out.Verdict.Kind != Wait {
			t.Fatalf("attempt %d: %+v", i, out)
		}
		r := effectsOf[Retrying](out)
		if len(r) != 1 || r[0].Channel != chA || r[0].DelayMs > PersistentBackoffMaxMs {
			t.Fatalf("attempt %d: retrying %+v", i, r)
		}
		m.advance(out.Verdict.DelayMs)
		if v := m.request("a1", chA); v.Kind != Pass {
			t.Fatalf("attempt %d: the retry was rerouted: %+v", i, v)
		}
	}
	// A success ends it like any recovery.
	m.step(Settled{Agent: "a1"})
	if len(effectsOf[GaveUp](m.step(Request{Agent: "a1", Proposed: chA}))) != 0 {
		t.Fatal("gave up after a success")
	}
}

func TestPersistentWaitsOutAModelTheRouteDoesNotServeYet(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain, c.Persistent = nil, true })
	m.request("a1", chA)
	gone := Failure{Code: "PI_AI_ERROR", Message: "model_not_found: no such model", Status: 404}
	for i := 0; i < 5; i++ {
		out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: gone, Phase: BeforeHost, HostRetry: stock})
		if out.Verdict.Kind != Wait || len(effectsOf[Retrying](out)) != 1 {
			t.Fatalf("attempt %d: %+v", i, out)
		}
		m.advance(out.Verdict.DelayMs)
		m.request("a1", chA)
	}
}

func TestPersistentStillHandsBackWhatWaitingNeverFixes(t *testing.T) {
	for _, f := range []Failure{{Code: "INVALID_REQUEST"}, {Code: "AUTH", Status: 401, Message: "invalid api key"}, {Code: "QUOTA"}} {
		m := newSim(t, func(c *Config) { c.Chain, c.Persistent = nil, true })
		m.request("a1", chA)
		var out Output
		for i := 0; i < 3; i++ { // before and after the host's retries
			out = m.step(RequestError{Agent: "a1", Provider: "p", Failure: f, Phase: AfterHost, HostRetry: stock})
			if out.Verdict.Kind != Wait {
				break
			}
		}
		if out.Verdict.Kind != Delegate {
			t.Errorf("%s: %+v, want it handed back", f.Code, out)
		}
	}
}

// With a chain whose every channel is down, the wait for the first one back
// is not bounded by giveUpAfterMs.
func TestPersistentWaitsForAChainPastGiveUpAfter(t *testing.T) {
	m := newSim(t, func(c *Config) {
		c.Persistent, c.GiveUpAfterMs, c.CooldownMs, c.MaxCooldownMs = true, 1000, 600_000, 600_000
	})
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", stock) // A opens, fails over to B
	m.request("a1", chA)
	out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "QUOTA"}, Phase: BeforeHost, HostRetry: stock})
	if out.Verdict.Kind != Wait || out.Verdict.DelayMs < 1000 {
		t.Fatalf("%+v, want a wait for A past giveUpAfterMs", out)
	}
}

// Compaction and title calls go off an open channel like agent calls, and
// change nothing: no agent, no count, no probe slot.
func TestAuxCallsAreRoutedOffAnOpenChannel(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chC} })
	if v := m.step(AuxRequest{Proposed: chA, Purpose: "compaction"}).Verdict; v.Kind != Pass {
		t.Fatalf("healthy: %+v", v)
	}
	openA(m)
	before := len(m.s.circuits)
	out := m.step(AuxRequest{Proposed: chA, Purpose: "compaction", ReasoningEffort: "high"})
	if out.Verdict.Kind != Swap || out.Verdict.Channel != chC || !out.Verdict.DropReasoningEffort {
		t.Fatalf("open: %+v", out.Verdict)
	}
	if len(m.s.circuits) != before || len(kinds(out.Effects)) != 0 {
		t.Fatalf("an aux call changed state: %v", kinds(out.Effects))
	}
	m.step(SetBackup{Channel: chB})
	if v := m.step(AuxRequest{Proposed: chA, Purpose: "session-title"}).Verdict; v.Channel != chB {
		t.Fatalf("the backup first: %+v", v)
	}
	// A channel on no chain is still routed off when its breaker is open.
	m2 := newSim(t, func(c *Config) { c.Chain = nil })
	if v := m2.step(AuxRequest{Proposed: chA, Purpose: "compaction"}).Verdict; v.Kind != Pass {
		t.Fatalf("no chain: %+v", v)
	}
}
