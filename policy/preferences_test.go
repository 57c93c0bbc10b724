package policy

import "testing"

// The backup is the module's to answer: set, replaced, cleared.
func TestPreferencesAnswerTheBackup(t *testing.T) {
	m := newSim(t, nil)
	for _, tc := range []struct {
		set  Channel
		want Channel
	}{{chT, chT}, {chB, chB}, {Channel{}, Channel{}}, {Channel{Provider: "half"}, Channel{}}} {
		m.step(SetBackup{Channel: tc.set})
		if got := m.s.Preferences().Backup; got != tc.want {
			t.Fatalf("after set-backup %v: backup %v, want %v", tc.set, got, tc.want)
		}
	}
}
