package policy

import "testing"

// gatewayErr is what a pi-ai route reports for an answer it cannot read: no
// status, a code the host does not explain, and no words to go by.
var gatewayErr = Failure{Code: "PI_AI_ERROR", Message: "409 conflict, try again"}

// failTimes fails the agent's request once per failure, asking before and
// (after a Defer) after the host as the shim does, and sends the retry back
// to its channel after each Wait or Retry; it returns the last answer and
// how many failures were answered before it.
func failTimes(m *sim, failures []Failure) (Output, int) {
	var out Output
	for i, f := range failures {
		out = m.step(RequestError{Agent: "a1", Provider: "p", Failure: f, Phase: BeforeHost, HostRetry: stock, Rand: uint64(i) << 40})
		if out.Verdict.Kind == Defer {
			out = m.step(RequestError{Agent: "a1", Provider: "p", Failure: f, Phase: AfterHost, HostRetry: stock})
		}
		if out.Verdict.Kind == Delegate {
			return out, i + 1
		}
		m.advance(out.Verdict.DelayMs)
		m.request("a1", chA)
	}
	return out, len(failures)
}

func repeat(f Failure, n int) []Failure {
	out := make([]Failure, n)
	for i := range out {
		out[i] = f
	}
	return out
}

// With retryUnknown off, one model step retries unknownMaxRetries unknown
// failures in a row and hands the next back, with or without persistent and
// a chain; with it on (the default) nothing changes.
func TestUnknownCapHandsBackAfterUnknownMaxRetries(t *testing.T) {
	for _, tc := range []struct {
		name       string
		mutate     func(*Config)
		failures   []Failure
		handedBack int // the failure handed back (1-based); 0: none of them
	}{
		{"reconnect row, cap 2: the third failure goes back", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 2
		}, repeat(gatewayErr, 10), 3},
		{"cap 0: the first failure goes back", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 0
		}, repeat(gatewayErr, 10), 1},
		{"the default cap of 3, with a chain: failovers count too", func(c *Config) {
			c.RetryUnknown, c.ProviderThreshold = false, 0
		}, repeat(gatewayErr, 10), 4},
		{"retryUnknown on (the default) with persistent: never handed back", func(c *Config) {
			c.Chain, c.Persistent, c.UnknownMaxRetries = nil, true, 0
		}, repeat(gatewayErr, 30), 0},
		{"a transient failure between them starts the count again", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 2
		}, []Failure{gatewayErr, gatewayErr, {Code: "STREAM_CLOSED"}, gatewayErr, gatewayErr, gatewayErr}, 6},
		{"a missing model is not capped: model-unavailable, not unknown", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 0
		}, repeat(Failure{Code: "PI_AI_ERROR", Message: "model_not_found: no such model"}, 10), 0},
		{"an unconfigured model is not capped", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 0
		}, repeat(Failure{Code: "MODEL_NOT_CONFIGURED"}, 10), 0},
		{"a code the operator classes as unknown is capped", func(c *Config) {
			c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 1
			c.Classes = map[string]Class{"STREAM_CLOSED": ClassUnknown}
		}, repeat(Failure{Code: "STREAM_CLOSED"}, 10), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.mutate)
			m.request("a1", chA)
			out, n := failTimes(m, tc.failures)
			if tc.handedBack == 0 {
				if out.Verdict.Kind == Delegate {
					t.Fatalf("failure %d handed back: %+v", n, out)
				}
				return
			}
			if out.Verdict.Kind != Delegate || n != tc.handedBack {
				t.Fatalf("failure %d: %+v; want failure %d handed back", n, out, tc.handedBack)
			}
			g := effectsOf[GaveUp](out)
			if len(g) != 1 || g[0].Reason != UnknownRetriesSpent || g[0].Code != gatewayErr.Code && g[0].Code != tc.failures[n-1].Code {
				t.Fatalf("give-up %+v, want one for %s", g, UnknownRetriesSpent)
			}
		})
	}
}

// The cap is per model step: a success ends it, and the next step has the
// whole cap again.
func TestUnknownCapStartsAgainAfterASuccess(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain, c.Persistent, c.RetryUnknown, c.UnknownMaxRetries = nil, true, false, 2 })
	m.request("a1", chA)
	if out, n := failTimes(m, repeat(gatewayErr, 2)); out.Verdict.Kind != Wait {
		t.Fatalf("failure %d: %+v", n, out)
	}
	m.step(Settled{Agent: "a1"})
	m.request("a1", chA)
	out, n := failTimes(m, repeat(gatewayErr, 5))
	if out.Verdict.Kind != Delegate || n != 3 {
		t.Fatalf("after a success: failure %d %+v, want the third handed back", n, out)
	}
}

// Before the host the spent cap defers (the host's retry policy has its say
// first, as for a permanent failure); it is handed back once the host declines.
func TestUnknownCapDefersToTheHostFirst(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain, c.RetryUnknown, c.UnknownMaxRetries = nil, false, 0 })
	m.request("a1", chA)
	expect(t, m.step(RequestError{Agent: "a1", Provider: "p", Failure: gatewayErr, Phase: BeforeHost, HostRetry: stock}), Defer)
	expect(t, m.step(RequestError{Agent: "a1", Provider: "p", Failure: gatewayErr, Phase: AfterHost, HostRetry: stock}),
		Delegate, "give-up:"+string(UnknownRetriesSpent))
	if h := m.s.Health(); len(h) != 0 {
		t.Errorf("the handed-back failure was counted against the channel: %+v", h)
	}
}
