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
