package policy

import (
	"math/rand"
	"reflect"
	"testing"
)

func TestHostSpentBudgetFailsOverAndSwapsTheNextRequest(t *testing.T) {
	m := newSim(t, nil)
	if v := m.request("a1", chA); v.Kind != Pass {
		t.Fatalf("first request: %+v", v)
	}
	expect(t, m.fail("a1", BeforeHost, "RATE_LIMIT", "", llmRetry), Defer)
	expect(t, m.fail("a1", AfterHost, "RATE_LIMIT", "", llmRetry), Retry, "circuit:closed>open", "failover:p/b")
	if v := m.request("a1", chA); v.Kind != Swap || v.Channel != chB {
		t.Fatalf("next request: %+v, want swap to %s", v, chB)
	}
	// Another agent starting on the open primary is routed away too.
	if v := m.request("a2", chA); v.Kind != Swap || v.Channel != chB {
		t.Fatalf("other agent: %+v", v)
	}
}

func TestQuotaFailsOverBeforeTheHostRetries(t *testing.T) {
	for _, tc := range []struct{ code, msg string }{
		{"QUOTA", "Insufficient Balance"},
		{"HTTP_402", ""},
		{"RATE_LIMIT", "已达到 Token Plan 用量上限"},
	} {
		t.Run(tc.code, func(t *testing.T) {
			m := newSim(t, nil)
			m.request("a1", chA)
			out := m.fail("a1", BeforeHost, tc.code, tc.msg, llmRetry)
			expect(t, out, Retry, "circuit:closed>open", "failover:p/b")
			if cc := out.Effects[0].(CircuitChanged); cc.Class != ClassQuota {
				t.Errorf("class %s", cc.Class)
			}
		})
	}
}

func TestUncoveredTransientWaitsThenOpensAtThreshold(t *testing.T) {
	m := newSim(t, func(c *Config) { c.FailureThreshold = 3; c.SpillAfter = 0 })
	m.request("a1", chA)
	// STREAM_CLOSED is not in the host's retryable codes: the plugin retries it itself.
	for i := 1; i <= 2; i++ {
		out := m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry)
		expect(t, out, Wait, "retry")
		if r := out.Effects[0].(Retrying); r.Attempt != i {
			t.Errorf("attempt %d, want %d", r.Attempt, i)
		}
		m.request("a1", chA)
	}
	expect(t, m.fail("a1", AfterHost, "STREAM_CLOSED", "", llmRetry), Retry, "circuit:closed>open", "failover:p/b")
}

func TestPermanentFailuresAreHandedBackWithoutBlame(t *testing.T) {
	m := newSim(t, nil)
	m.request("a1", chA)
	// Before the host: its retry policy decides first (mode "always" retries even these).
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", llmRetry), Defer)
	expect(t, m.fail("a1", AfterHost, "CONTEXT_WINDOW_EXCEEDED", "", llmRetry), Delegate, "give-up:not-recoverable")
	if len(m.s.Health()) != 0 {
		t.Errorf("a permanent failure blamed the channel: %+v", m.s.Health())
	}
}

func TestNothingRoutableWaitsForTheFirstToComeBack(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 20_000; c.ProviderThreshold = 0 })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil) // a opens until +20s, a1 fails over to b
	m.advance(5_000)
	m.request("a1", chA) // swapped to b
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	expect(t, out, Wait, "circuit:closed>open", "retry")
	if r := out.Effects[1].(Retrying); r.Channel != chA || out.Verdict.DelayMs != 15_000 {
		t.Fatalf("waits %d ms for %s; want 15000 for a, the first to come back", out.Verdict.DelayMs, r.Channel)
	}
	m.advance(out.Verdict.DelayMs)
	if v := m.request("a1", chB); v.Kind != Swap || v.Channel != chA {
		t.Fatalf("after the wait: %+v, want the probe on a", v)
	}
}

func TestGiveUpReasons(t *testing.T) {
	t.Run("no chain: observe, never hold the turn", func(t *testing.T) {
		m := newSim(t, func(c *Config) { c.Chain = nil })
		m.request("a1", chA)
		expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Delegate, "circuit:closed>open", "give-up:no-routable-fallback")
	})
	t.Run("recovery takes longer than giveUpAfterMs", func(t *testing.T) {
		m := newSim(t, func(c *Config) { c.GiveUpAfterMs = 30_000; c.ProviderThreshold = 0 })
		m.request("a1", chA)
		m.fail("a1", BeforeHost, "QUOTA", "", nil)
		m.request("a1", chA)
		out := m.fail("a1", BeforeHost, "QUOTA", "", nil) // both open for a minute: beyond 30 s
		expect(t, out, Delegate, "circuit:closed>open", "give-up:recovery-timeout")
	})
	t.Run("permanent", func(t *testing.T) {
		m := newSim(t, nil)
		m.request("a1", chA)
		expect(t, m.fail("a1", AfterHost, "INVALID_REQUEST", "", nil), Delegate, "give-up:not-recoverable")
	})
}

func TestFailoverBudgetStopsPingPong(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.MaxFailovers = 1; c.ProviderThreshold = 0 })
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "failover:p/b")
	m.request("a1", chA) // swapped to b
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	expect(t, out, Delegate, "circuit:closed>open", "give-up:budget-exhausted")

	// A success resets the budget: after one on c, a failure there may fail over again.
	m.request("a1", chC)
	m.step(Settled{Agent: "a1"})
	m.advance(DefaultCooldownMs)
	m.request("a1", chC)
	out = m.step(RequestError{Agent: "a1", Provider: chC.Provider, Phase: BeforeHost, Failure: Failure{Code: "QUOTA"}})
	expect(t, out, Retry, "circuit:closed>open", "failover:p/a")
}

func TestRetryAfterLongerThanCooldownKeepsTheChannelOpen(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 1000 })
	m.request("a1", chA)
	out := m.step(RequestError{Agent: "a1", Provider: "p", Phase: BeforeHost,
		Failure: Failure{Code: "QUOTA", RetryAfterMs: 3_600_000}})
	if cc := out.Effects[0].(CircuitChanged); cc.OpenUntilMs != m.now+3_600_000 {
		t.Fatalf("open until %d, want now+1h", cc.OpenUntilMs)
	}
	m.advance(60_000)
	if v := m.request("a2", chA); v.Kind != Swap {
		t.Errorf("after a minute the provider's hour is not over: %+v", v)
	}
}

func TestUnroutedFailureIsLeftToTheHost(t *testing.T) {
	m := newSim(t, nil)
	expect(t, m.fail("ghost", BeforeHost, "QUOTA", "", nil), Defer)
	expect(t, m.fail("ghost", AfterHost, "QUOTA", "", nil), Delegate, "give-up:unknown-channel")
	if len(m.s.Health()) != 0 {
		t.Errorf("a breaker was guessed: %+v", m.s.Health())
	}
}

// The same state, times and events give the same outputs: the property the
// wasm/native differential test and the golden traces rest on.
func TestStepIsDeterministic(t *testing.T) {
	run := func() []Output {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.CooldownMs = 5000 })
		r := rand.New(rand.NewSource(7))
		codes := []string{"RATE_LIMIT", "QUOTA", "SERVER", "STREAM_CLOSED", "ABORTED", "UNKNOWN_MODEL"}
		var outs []Output
		for i := 0; i < 5000; i++ {
			m.advance(int64(r.Intn(3000)))
			agent := []string{"a", "b", "c", "d"}[r.Intn(4)]
			var ev Event
			switch r.Intn(5) {
			case 0, 1:
				ev = Request{Agent: agent, Proposed: []Channel{chA, chB, chC}[r.Intn(3)]}
			case 2, 3:
				ev = RequestError{Agent: agent, Provider: []string{"p", "q"}[r.Intn(2)], Phase: []Phase{BeforeHost, AfterHost}[r.Intn(2)],
					Failure: Failure{Code: codes[r.Intn(len(codes))]}, HostRetry: llmRetry, Rand: r.Uint64() % randRange}
			default:
				ev = Settled{Agent: agent}
			}
			outs = append(outs, m.step(ev))
		}
		return outs
	}
	if a, b := run(), run(); !reflect.DeepEqual(a, b) {
		t.Fatal("two runs of the same events differ")
	}
}
