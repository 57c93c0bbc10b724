package policy

import (
	"reflect"
	"testing"
)

var (
	chA = Channel{"p", "a"}
	chB = Channel{"p", "b"}
	chC = Channel{"q", "c"}
)

// sim drives a State on a virtual clock: tests move time with advance and
// never sleep.
type sim struct {
	t   *testing.T
	s   *State
	now int64
}

func newSim(t *testing.T, mutate func(*Config)) *sim {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Chain = []Channel{chA, chB}
	if mutate != nil {
		mutate(&cfg)
	}
	s, err := NewState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &sim{t: t, s: s, now: 1_000_000}
}

func (m *sim) advance(ms int64) { m.now += ms }

func (m *sim) step(ev Event) Output { return Step(m.s, m.now, ev) }

func (m *sim) request(agent string, proposed Channel) Verdict {
	return m.step(Request{Agent: agent, Proposed: proposed}).Verdict
}

func (m *sim) fail(agent string, phase Phase, code, msg string, host *HostRetryPolicy) Output {
	return m.step(RequestError{Agent: agent, Provider: "p", Failure: Failure{Code: code, Message: msg}, Phase: phase, HostRetry: host})
}

func (m *sim) state(ch Channel) CircuitState {
	if c := m.s.circuits[ch]; c != nil {
		return c.state
	}
	return Closed
}

var llmRetry = &HostRetryPolicy{Mode: "normal", MaxRetries: 2, RetryableCodes: []string{"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "EMPTY_RESPONSE"}}

func kinds(fx []Effect) []string {
	var out []string
	for _, e := range fx {
		switch e := e.(type) {
		case CircuitChanged:
			out = append(out, "circuit:"+string(e.From)+">"+string(e.To))
		case FailedOver:
			out = append(out, "failover:"+e.To.String())
		case Retrying:
			out = append(out, "retry")
		case GaveUp:
			out = append(out, "give-up:"+string(e.Reason))
		case Probe:
			out = append(out, "probe:"+e.Channel.String())
		case EffortDropped:
			out = append(out, "effort-dropped:"+e.Effort)
		case Spilled:
			out = append(out, "spill:"+e.To.String())
		case WaitCut:
			out = append(out, "wait-cut:"+e.Channel.String())
		case SkippedTooSmall:
			out = append(out, "too-small:"+e.Channel.String())
		case ScheduleWake:
			// Wakes are checked where they matter (probe tests), not in every expectation.
		}
	}
	return out
}

func expect(t *testing.T, got Output, verdict VerdictKind, effects ...string) {
	t.Helper()
	if got.Verdict.Kind != verdict {
		t.Errorf("verdict %s, want %s (%+v)", got.Verdict.Kind, verdict, got)
	}
	if k := kinds(got.Effects); !reflect.DeepEqual(k, effects) && !(len(k) == 0 && len(effects) == 0) {
		t.Errorf("effects %v, want %v", k, effects)
	}
}
