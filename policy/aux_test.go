package policy

import "testing"

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
