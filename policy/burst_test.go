package policy

import (
	"reflect"
	"testing"
)

// hostModel plays dsh-llm-retry for drive: nil retries nothing, "normal"
// retries its codes up to max times per provider, "always" retries everything.
type hostModel struct {
	policy *HostRetryPolicy
}

func (h hostModel) retries(code string, done int) bool {
	switch {
	case h.policy == nil:
		return false
	case h.policy.Mode == "always":
		return true
	default:
		return h.policy.covers(code) && done < h.policy.MaxRetries
	}
}

// stock is dsh-llm-retry as shipped: mode normal, 5 retries of its five codes.
var stock = &HostRetryPolicy{Mode: "normal", MaxRetries: 5, RetryableCodes: []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}}

// driven is what one agent turn came to under drive.
type driven struct {
	requests map[Channel]int
	answered Channel // zero when the turn ended in a failure
	last     VerdictKind
	original *Failure
}

// drive runs one agent turn the way the host's loop does: request, stream,
// on failure ask before-host, let the host retry or decline, ask after-host.
// script gives each channel's outcomes in turn ("ok" or a failure code); the
// last one repeats.
func drive(t *testing.T, m *sim, host hostModel, script map[Channel][]string) driven {
	t.Helper()
	d := driven{requests: map[Channel]int{}}
	proposed := chA
	hostDone := map[string]int{}
	for i := 0; i < 100; i++ {
		v := m.step(Request{Agent: "a1", Proposed: proposed}).Verdict
		target := proposed
		if v.Kind == Swap {
			target = v.Channel
		}
		proposed = target // the host proposes the header it logged last
		outcomes := script[target]
		n := d.requests[target]
		d.requests[target]++
		outcome := outcomes[min(n, len(outcomes)-1)]
		m.advance(100)
		if outcome == "ok" {
			m.step(Settled{Agent: "a1"})
			d.answered = target
			return d
		}
		ev := RequestError{Agent: "a1", Provider: target.Provider, Failure: Failure{Code: outcome}, Phase: BeforeHost, HostRetry: host.policy}
		out := m.step(ev)
		if out.Verdict.Kind == Defer {
			if host.retries(outcome, hostDone[target.Provider]) {
				hostDone[target.Provider]++
				m.advance(500)
				continue
			}
			ev.Phase = AfterHost
			out = m.step(ev)
		}
		d.last = out.Verdict.Kind
		switch out.Verdict.Kind {
		case Retry, Defer:
		case Wait:
			m.advance(out.Verdict.DelayMs)
		default:
			d.original = out.Verdict.Original
			return d
		}
	}
	t.Fatal("the turn never ended")
	return d
}

func TestEveryFailureCountsWhoeverRetriesIt(t *testing.T) {
	always := &HostRetryPolicy{Mode: "always"}
	tests := []struct {
		name     string
		chain    []Channel
		host     *HostRetryPolicy
		script   map[Channel][]string
		requests map[Channel]int
		answered Channel
	}{
		{"429 forever, stock host: the third failure fails over, pre-empting the host's budget",
			[]Channel{chA, chB}, stock, map[Channel][]string{chA: {"RATE_LIMIT"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"reset forever, stock host: the same",
			[]Channel{chA, chB}, stock, map[Channel][]string{chA: {"TRANSPORT"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"500, 500, ok: a blip stays on the primary",
			[]Channel{chA, chB}, stock, map[Channel][]string{chA: {"SERVER", "SERVER", "ok"}, chB: {"ok"}},
			map[Channel]int{chA: 3}, chA},
		{"retryPolicy mode always: counted the same, the host never declines",
			[]Channel{chA, chB}, always, map[Channel][]string{chA: {"RATE_LIMIT"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"no retry policy: the plugin's own waits, then the threshold fails over",
			[]Channel{chA, chB}, nil, map[Channel][]string{chA: {"SERVER"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"a code the host does not retry (STREAM_CLOSED): counted once, not twice",
			[]Channel{chA, chB}, stock, map[Channel][]string{chA: {"STREAM_CLOSED"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"unknown class counts like transient",
			[]Channel{chA, chB}, stock, map[Channel][]string{chA: {"WEIRD"}, chB: {"ok"}},
			map[Channel]int{chA: 3, chB: 1}, chB},
		{"no fallback: the host's whole budget, then the plugin's wait, until the primary answers",
			[]Channel{chA}, stock, map[Channel][]string{chA: {"RATE_LIMIT", "RATE_LIMIT", "RATE_LIMIT", "RATE_LIMIT", "RATE_LIMIT", "RATE_LIMIT", "ok"}},
			map[Channel]int{chA: 7}, chA},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Spilling off: the threshold's own counts (spill_test.go has them with it).
			m := newSim(t, func(c *Config) { c.Chain = tt.chain; c.ProviderThreshold = 0; c.SpillAfter = 0 })
			d := drive(t, m, hostModel{tt.host}, tt.script)
			if !reflect.DeepEqual(d.requests, tt.requests) || d.answered != tt.answered {
				t.Fatalf("requests %v answered by %q (last verdict %s); want %v answered by %q", d.requests, d.answered, d.last, tt.requests, tt.answered)
			}
		})
	}
}

func TestBurstBelowThresholdDefersAndSuccessResetsIt(t *testing.T) {
	m := newSim(t, func(c *Config) { c.SpillAfter = 0 })
	for round := 0; round < 3; round++ { // 500, 500, ok, three times over: never trips
		m.request("a1", chA)
		expect(t, m.fail("a1", BeforeHost, "SERVER", "", stock), Defer)
		m.request("a1", chA)
		expect(t, m.fail("a1", BeforeHost, "SERVER", "", stock), Defer)
		m.request("a1", chA)
		m.step(Settled{Agent: "a1"})
		if c := m.s.circuits[chA]; c.failures != 0 || c.state != Closed {
			t.Fatalf("round %d: after the success the burst is %d, state %s", round, c.failures, c.state)
		}
	}
}

func TestThresholdWithTheFallbackOpenDefers(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 0 })
	m.request("a2", chB)
	m.step(RequestError{Agent: "a2", Provider: "p", Failure: Failure{Code: "QUOTA"}, Phase: BeforeHost}) // b opens
	for i := 0; i < 4; i++ {
		m.request("a1", chA)
		expect(t, m.fail("a1", BeforeHost, "RATE_LIMIT", "", stock), Defer)
	}
	if m.state(chA) != Closed {
		t.Fatal("the primary opened with nowhere to go before the host's budget was spent")
	}
	// The host's budget spent: open, and wait for the first channel back (today's rule).
	out := m.fail("a1", AfterHost, "RATE_LIMIT", "", stock)
	expect(t, out, Wait, "circuit:closed>open", "retry")
}

func TestAfterHostDoesNotCountTheSameFailureTwice(t *testing.T) {
	m := newSim(t, nil)
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "STREAM_CLOSED", "", stock), Defer)
	expect(t, m.fail("a1", AfterHost, "STREAM_CLOSED", "", stock), Wait, "retry")
	if c := m.s.circuits[chA]; c.failures != 1 {
		t.Fatalf("one failure counted %d times", c.failures)
	}
}
