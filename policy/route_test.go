package policy

import "testing"

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

func TestUserChosenBackupComesBeforeTheChain(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC} })
	m.step(SetBackup{Channel: chC})
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "QUOTA", "", nil), Retry, "circuit:closed>open", "failover:q/c")
	m.step(SetBackup{})
	m.request("a2", Channel{"x", "y"})
	m.step(Settled{Agent: "a2"})
	m.request("a3", chA)
	if v := m.request("a4", chA); v.Channel != chB {
		t.Fatalf("with the backup cleared the chain decides: %+v", v)
	}
}
