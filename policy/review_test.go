package policy

import (
	"fmt"
	"math/rand"
	"testing"
)

// Bugs found in review, each pinned by a test that failed before its fix.

// {a/b, c} and {a, b/c} are two channels: opening one leaves the other alone.
// Joined as "provider/model" they were one key, and the second was skipped.
func TestSlashedNamesAreDistinctChannels(t *testing.T) {
	x, y, z := Channel{"a/b", "c"}, Channel{"a", "b/c"}, Channel{"q", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{x, y, z} })
	m.request("a1", x)
	out := m.step(RequestError{Agent: "a1", Provider: "a/b", Failure: Failure{Code: "QUOTA"}, Phase: BeforeHost})
	expect(t, out, Retry, "circuit:closed>open", "failover:a/b/c")
	if fo := out.Effects[1].(FailedOver); fo.To != y {
		t.Fatalf("failed over to %+v, want %+v", fo.To, y)
	}
	if h := m.s.Health(); len(h) != 1 || h[0].Channel != x {
		t.Fatalf("health %+v, want only %+v", h, x)
	}
}

// A provider breaker's open time ends like a channel's: after it, a
// transient failure on another of its models is the host's to retry, not an
// instant failover.
func TestProviderBreakerExpires(t *testing.T) {
	chZ := Channel{"p", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chZ, chC}; c.Probes = false })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "circuit:closed>open", "failover:q/c")
	m.advance(10 * 60_000)
	m.request("a2", chZ)
	expect(t, m.fail("a2", BeforeHost, "SERVER", "", llmRetry), Defer, "circuit:open>half-open")
}

// Restored records are judged at the caller's time: long-expired ones do not
// re-open their provider.
func TestMergeJudgesAtNow(t *testing.T) {
	chZ := Channel{"p", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chZ, chC}; c.Probes = false })
	_, err := m.s.Merge(m.now, []ChannelHealth{
		{Channel: chA, State: Open, Opens: 1, OpenUntilMs: 61_000, LastCode: "QUOTA", ChangedAtMs: 1_000},
		{Channel: chB, State: Open, Opens: 1, OpenUntilMs: 61_000, LastCode: "QUOTA", ChangedAtMs: 1_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.request("a1", chZ)
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Defer)
}

// Restoring is linear in the records: 20 000 under one provider once froze a
// host (each record re-derived the provider over every breaker).
func TestMergeManyRecords(t *testing.T) {
	m := newSim(t, nil)
	hs := make([]ChannelHealth, 20_000)
	for i := range hs {
		hs[i] = ChannelHealth{Channel: Channel{"p", fmt.Sprint("m", i)}, State: Open, OpenUntilMs: m.now + 60_000, ChangedAtMs: 1}
	}
	if n, err := m.s.Merge(m.now, hs); err != nil || n != len(hs) {
		t.Fatalf("adopted %d, %v", n, err)
	}
	if p := m.s.providerBreaker("p"); p.state != Open {
		t.Fatalf("provider %s, want open", p.state)
	}
}

// Every wait a provider states is capped at a week, whatever it says.
func TestStatedWaitIsCapped(t *testing.T) {
	for _, ra := range []int64{week + 1, 1 << 50, 1<<53 - 1} {
		m := newSim(t, nil)
		m.request("a1", chA)
		out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "QUOTA", RetryAfterMs: ra}, Phase: BeforeHost})
		if cc := out.Effects[0].(CircuitChanged); cc.OpenUntilMs != m.now+week {
			t.Errorf("Retry-After %d: open until +%d, want a week", ra, cc.OpenUntilMs-m.now)
		}
	}
}

// A backup with a blank provider or model is refused, as the chain refuses it.
func TestBlankBackupIsRefused(t *testing.T) {
	m := newSim(t, nil)
	for _, b := range []Channel{{"", "m"}, {"q", ""}} {
		m.step(SetBackup{Channel: b})
		if !m.s.backup.IsZero() {
			t.Fatalf("backup %+v taken", b)
		}
	}
}

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
