package policy

import "testing"

// Found by the simulator (testhost/sim, seed 4): a provider breaker closed by
// a sibling model's success came back open after a restart, because health
// held channel breakers only and restore derived the provider's again from
// its open models. The working sibling was then avoided until the spent
// model's quota reset, hours later.
func TestRestoreKeepsAProviderClosedByASuccess(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 1; c.Chain = []Channel{chA, chB, chC} })
	spend := func(agent string, ch Channel, retryAfterMs int64) {
		m.request(agent, ch)
		m.step(RequestError{Agent: agent, Provider: ch.Provider, Phase: BeforeHost,
			Failure: Failure{Code: "HTTP_402", Message: "Insufficient Balance", RetryAfterMs: retryAfterMs}})
	}
	spend("a1", chA, 3*3600_000) // p/a is spent for three hours; provider p opens with it
	spend("c1", chC, 0)          // q/c for its cooldown, a minute
	if p := m.s.providerBreaker("p"); p == nil || p.state != Open {
		t.Fatal("provider p did not open with its spent model")
	}
	// Nothing is routable, so a2's request goes to p/b as proposed, and it
	// answers: p works after all, and closes.
	m.advance(1000)
	m.request("a2", chB)
	m.step(Settled{Agent: "a2"})
	if p := m.s.providerBreaker("p"); p.state != Closed {
		t.Fatalf("provider p is %s after a success on p/b", p.state)
	}
	m.advance(60_000) // q/c is due again
	before := m.step(Request{Agent: "fresh", Proposed: chB}).Verdict

	// A restart: a new state, the snapshot merged into it.
	s2, err := NewState(m.s.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Merge(m.now, m.s.Health()); err != nil {
		t.Fatal(err)
	}
	after := Step(s2, m.now, Request{Agent: "fresh", Proposed: chB}).Verdict
	if before.Kind != after.Kind || before.Channel != after.Channel {
		t.Fatalf("a fresh agent on p/b: %s %v before the restart, %s %v after it", before.Kind, before.Channel, after.Kind, after.Channel)
	}
}

// Found by the simulator (seed 10): a provider breaker whose open time had
// ended on a wake (half-open) came back open from the snapshot, and so was
// reported ending a second time. A provider breaker holds no probe for
// restore to take away: its half-open comes back as it is, with nothing due.
func TestRestoreKeepsAHalfOpenProvider(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 1; c.Probes = false })
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	m.now = out.Effects[1].(CircuitChanged).OpenUntilMs
	m.step(Wake{})
	if p := m.s.providerBreaker("p"); p.state != HalfOpen {
		t.Fatalf("provider p is %s after its wake, want half-open", p.state)
	}
	s2, err := NewState(m.s.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Merge(m.now, m.s.Health()); err != nil {
		t.Fatal(err)
	}
	if p := s2.providerBreaker("p"); p.state != HalfOpen {
		t.Fatalf("restored provider p is %s, want half-open", p.state)
	}
	if out := Step(s2, m.now, Wake{}); len(out.Effects) != 0 {
		t.Fatalf("a wake after the restore said %v, want nothing", kinds(out.Effects))
	}
}
