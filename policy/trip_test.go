package policy

import (
	"reflect"
	"testing"
)

// The stall trip, the model-unavailable wordings and the targets the host
// cannot serve (burst.go, classify.go, servable.go).

func TestFirstStallCutOpensTheChannelWhenThereIsAFallback(t *testing.T) {
	cut := StreamCheck{Channel: chA, OpenedMs: 1_000_000}
	tests := []struct {
		name    string
		mutate  func(*Config)
		purpose string
		opens   bool
	}{
		{"agent call, fallback in the chain", nil, "", true},
		{"compaction call follows the same rule", nil, PurposeCompaction, true},
		{"session title call follows the same rule", nil, PurposeSessionTitle, true},
		{"no fallback: the host retries it as any TIMEOUT", func(c *Config) { c.Chain = []Channel{chA} }, "", false},
		{"no chain: observe only", func(c *Config) { c.Chain = nil }, "", false},
		{"stall.tripOnCut false", func(c *Config) { c.Stall.TripOnCut = false }, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) {
				c.Stall.StallLimits = StallLimits{FirstChunkMs: 5000, IdleMs: 5000}
				c.Stall.Compaction, c.Stall.SessionTitle = c.Stall.StallLimits, c.Stall.StallLimits
				if tt.mutate != nil {
					tt.mutate(c)
				}
			})
			m.request("a1", chA)
			m.advance(5000)
			ev := cut
			ev.Purpose = tt.purpose
			out := m.step(ev)
			if out.Verdict.Kind != Cut {
				t.Fatalf("verdict %s, want cut", out.Verdict.Kind)
			}
			if got := m.state(chA) == Open; got != tt.opens {
				t.Fatalf("opened %v, want %v (effects %+v)", got, tt.opens, out.Effects)
			}
			if !tt.opens {
				return
			}
			if cc := out.Effects[1].(CircuitChanged); cc.Cause != StallCause || cc.Class != ClassTransient {
				t.Errorf("transition %+v, want cause stall", cc)
			}
			// The cut call's TIMEOUT then fails the agent over at once: one attempt, not the host's six.
			expect(t, m.fail("a1", BeforeHost, StallCode, "no output for 5.0 s", stock), Retry, "failover:p/b")
		})
	}
}

func TestModelUnavailableWordingFailsOverAtOnce(t *testing.T) {
	for _, f := range []Failure{
		{Code: "MODEL_NOT_FOUND"}, {Code: "model_not_found"}, {Code: "MODEL_NOT_CONFIGURED"}, {Code: "model_not_configured"},
		{Code: "UNKNOWN_MODEL"}, {Code: "unknown_model"},
		{Code: "PI_AI_ERROR", Message: "model deepseek-v4 is not supported by any configured account"},
		{Code: "PI_AI_ERROR", Message: "400 {\"error\":{\"type=model_not_configured\"}}"},
		{Code: "PI_AI_ERROR", Message: "Model gpt-x is not configured for this account"},
		{Code: "UNKNOWN", Message: "no model configured for route"},
		{Code: "HTTP_503", Message: "{\"code\":\"model_not_found\"}", Status: 503},
		{Code: "PI_AI_ERROR", Message: "模型不存在"},
		{Code: "PI_AI_ERROR", Message: "该账户模型未配置"},
		{Code: "PI_AI_ERROR", Message: "当前分组不支持该模型"},
	} {
		t.Run(f.Code+" "+f.Message, func(t *testing.T) {
			if c := Classify(f); c != ClassModelUnavailable {
				t.Fatalf("Classify = %s, want model-unavailable", c)
			}
			m := newSim(t, nil)
			m.request("a1", chA)
			out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: f, Phase: BeforeHost, HostRetry: stock})
			expect(t, out, Retry, "circuit:closed>open", "failover:p/b")
		})
	}
}

func TestRequestErrorsThatFailEverywhereGoBackUncounted(t *testing.T) {
	for _, code := range []string{"INVALID_REPLAY_STATE", "UNSUPPORTED_OPTION", "UNSUPPORTED_REASONING_EFFORT", "invalid_replay_state"} {
		t.Run(code, func(t *testing.T) {
			if c := Classify(Failure{Code: code, Message: "model not found"}); c != ClassPermanent {
				t.Fatalf("Classify = %s, want permanent", c)
			}
			m := newSim(t, nil)
			m.request("a1", chA)
			expect(t, m.fail("a1", BeforeHost, code, "", stock), Defer)
			expect(t, m.fail("a1", AfterHost, code, "", stock), Delegate, "give-up:not-recoverable")
			if len(m.s.Health()) != 0 {
				t.Fatalf("counted: %+v", m.s.Health())
			}
		})
	}
}

func kindsWithUnroutable(fx []Effect) []string {
	var out []string
	for _, e := range fx {
		if u, ok := e.(Unroutable); ok {
			out = append(out, "unroutable:"+u.Channel.String()+":"+u.Code)
		}
	}
	return out
}

func TestTargetsTheHostCannotServeAreNeverRouted(t *testing.T) {
	missing := Channel{"missing-provider", "x"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, missing, chB}; c.ProviderThreshold = 0 })
	out := m.step(ModelInfo{Channel: missing, Code: "NO_ADAPTER"})
	if got := out.Effects; len(got) != 1 || !reflect.DeepEqual(got[0], Unroutable{Channel: missing, Keys: []string{"chain[1]"}, Code: "NO_ADAPTER"}) {
		t.Fatalf("effects %+v, want one unroutable naming chain[1]", got)
	}
	if out := m.step(ModelInfo{Channel: missing, Code: "NO_ADAPTER"}); len(out.Effects) != 0 {
		t.Fatalf("reported twice: %+v", out.Effects)
	}
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", stock), Retry, "circuit:closed>open", "failover:p/b")
	if v := m.request("a1", chA); v.Channel != chB {
		t.Fatalf("routed to %+v, want p/b past the unservable chain[1]", v)
	}
	// An adapter registered since: routable again.
	m.step(ModelInfo{Channel: missing, Known: true})
	if !m.s.servable(m.now, missing) {
		t.Fatal("still unservable after the host resolved it")
	}
	// A lookup that failed for another reason says nothing.
	m.step(ModelInfo{Channel: chB, Code: "TIMEOUT"})
	if !m.s.servable(m.now, chB) {
		t.Fatal("an inconclusive lookup made a target unservable")
	}
}

func TestAFailoverTargetThatCannotServeIsSkippedAtOnce(t *testing.T) {
	nokey := Channel{"p", "nokey"}
	t.Run("go on down the list", func(t *testing.T) {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, nokey, chB}; c.ProviderThreshold = 0 })
		d := drive(t, m, hostModel{stock}, map[Channel][]string{chA: {"RATE_LIMIT"}, nokey: {"MISSING_CREDENTIAL"}, chB: {"ok"}})
		// The second failure spills to nokey, which cannot serve; the same
		// request goes on to p/b, still off the primary it spilled from.
		if want := map[Channel]int{chA: 2, nokey: 1, chB: 1}; !reflect.DeepEqual(d.requests, want) || d.answered != chB {
			t.Fatalf("requests %v answered by %q; want %v by p/b", d.requests, d.answered, want)
		}
		if m.s.servable(m.now, nokey) {
			t.Fatal("not marked unservable")
		}
		if !m.s.servable(m.now+DefaultMaxCooldownMs, nokey) {
			t.Fatal("a mark made from a failed request never runs out")
		}
	})
	t.Run("nothing left: the primary's own failure goes back", func(t *testing.T) {
		// Spilling off: the primary opens and fails over (a spill back to a
		// closed primary ends with the primary's own failure in hand anyway).
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, nokey}; c.ProviderThreshold = 0; c.SpillAfter = 0 })
		d := drive(t, m, hostModel{stock}, map[Channel][]string{chA: {"RATE_LIMIT"}, nokey: {"NO_ADAPTER"}})
		if d.last != Delegate || d.original == nil || d.original.Code != "RATE_LIMIT" {
			t.Fatalf("ended with %s, original %+v; want delegate with the primary's RATE_LIMIT", d.last, d.original)
		}
		if want := map[Channel]int{chA: 3, nokey: 1}; !reflect.DeepEqual(d.requests, want) {
			t.Fatalf("requests %v, want %v", d.requests, want)
		}
	})
	t.Run("spilled to the only fallback, which cannot serve: the primary's own failure goes back at once", func(t *testing.T) {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, nokey}; c.ProviderThreshold = 0 })
		d := drive(t, m, hostModel{stock}, map[Channel][]string{chA: {"RATE_LIMIT"}, nokey: {"MISSING_CREDENTIAL"}})
		if d.last != Delegate || d.original == nil || d.original.Code != "RATE_LIMIT" {
			t.Fatalf("ended with %s, original %+v; want delegate with the primary's RATE_LIMIT", d.last, d.original)
		}
		if want := map[Channel]int{chA: 2, nokey: 1}; !reflect.DeepEqual(d.requests, want) {
			t.Fatalf("requests %v, want %v", d.requests, want)
		}
	})
	t.Run("only fallback known unservable at start: the host's budget, then the plugin's wait", func(t *testing.T) {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, nokey}; c.ProviderThreshold = 0; c.GiveUpAfterMs = 30_000 })
		m.step(ModelInfo{Channel: nokey, Code: "UNKNOWN_MODEL"})
		d := drive(t, m, hostModel{stock}, map[Channel][]string{chA: {"RATE_LIMIT"}})
		if want := map[Channel]int{chA: 6}; !reflect.DeepEqual(d.requests, want) || d.last != Delegate {
			t.Fatalf("requests %v, last %s; want %v and the primary's failure back", d.requests, d.last, want)
		}
	})
}
