package policy

import "testing"

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
