package policy

import (
	"fmt"
	"math/rand"
	"testing"
)

// The wake index answers what a scan over every breaker would, and the chain
// index what asking each entry's breakers would, after every step of a random
// stream with many channels and agents.
func TestWakeIndexMatchesAScan(t *testing.T) {
	for _, probes := range []bool{true, false} { // without probes only the chain index is checked
		matchesAScan(t, probes)
	}
}

func matchesAScan(t *testing.T, probes bool) {
	r := rand.New(rand.NewSource(9))
	var chain []Channel
	for p := range 4 {
		for mdl := range 5 {
			chain = append(chain, Channel{fmt.Sprint("p", p), fmt.Sprint("m", mdl)})
		}
	}
	m := newSim(t, func(c *Config) { c.Chain = chain; c.CooldownMs = 5_000; c.Probes = probes })
	codes := []string{"QUOTA", "SERVER", "RATE_LIMIT", "MODEL_NOT_FOUND"}
	for i := range 20_000 {
		m.advance(int64(r.Intn(400)))
		agent := fmt.Sprint("a", r.Intn(50))
		var ev Event
		switch d := r.Intn(10); {
		case d < 4:
			ev = Request{Agent: agent, Proposed: chain[r.Intn(len(chain))]}
		case d < 6:
			a := m.s.agents.lookup(agent)
			if a == nil || a.routed.IsZero() {
				continue
			}
			ev = RequestError{Agent: agent, Provider: a.routed.Provider, Failure: Failure{Code: codes[r.Intn(len(codes))]},
				Phase: []Phase{BeforeHost, AfterHost}[r.Intn(2)], HostRetry: llmRetry, Rand: r.Uint64() % randRange}
		case d < 8:
			ev = Settled{Agent: agent}
		case d < 9:
			ev = Wake{}
		default:
			ev = ProbeResult{Channel: chain[r.Intn(len(chain))], OK: r.Intn(2) == 0, Failure: Failure{Code: "SERVER"}}
		}
		m.step(ev)
		var want int64
		for _, c := range m.s.circuits {
			if c.state == Closed {
				continue
			}
			if due := m.s.reopensAt(m.now, c.channel); want == 0 || due < want {
				want = due
			}
		}
		for _, p := range m.s.providers { // an open provider is due at the end of its open time
			if b := &p.breaker; b.state == Open {
				if due := max(b.openUntilMs, m.now); want == 0 || due < want {
					want = due
				}
			}
		}
		if probes && want != m.s.wakeAt {
			t.Fatalf("step %d (%T): wake at %d, a scan says %d", i, ev, m.s.wakeAt, want)
		}
		// The chain index answers what asking each entry's breakers would.
		for j, ch := range chain {
			routable, at := true, m.now
			if c := m.s.circuits[ch]; c != nil {
				routable = c.routable(m.now) && c.parent.routable(m.now)
				at = max(at, c.reopensAt(m.now))
			}
			if p := m.s.providerBreaker(ch.Provider); p != nil {
				routable = routable && p.routable(m.now)
				if p.state == Open {
					at = max(at, p.openUntilMs)
				}
			}
			if m.s.routableInChain(m.now, j) != routable || m.s.reopensAtInChain(m.now, j) != at {
				t.Fatalf("step %d (%T): chain entry %v: index says routable %v from %d, its breakers %v from %d",
					i, ev, ch, m.s.routableInChain(m.now, j), m.s.reopensAtInChain(m.now, j), routable, at)
			}
		}
	}
}
