package policy

import "testing"

func TestReasoningEffortKeptOnlyWhereTheTargetListsIt(t *testing.T) {
	tests := []struct {
		name  string
		info  *ModelInfo
		drops bool
	}{
		{"listed", &ModelInfo{Channel: chB, Known: true, Efforts: []string{"low", "high"}}, false},
		{"not listed", &ModelInfo{Channel: chB, Known: true, Efforts: []string{"low"}}, true},
		{"no reasoning", &ModelInfo{Channel: chB, Known: true}, true},
		{"unresolvable", &ModelInfo{Channel: chB, Known: false}, true},
		{"never told", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, nil)
			if tt.info != nil {
				m.step(*tt.info)
			}
			openA(m)
			out := m.step(Request{Agent: "a1", Proposed: chA, ReasoningEffort: "high"})
			if out.Verdict.Kind != Swap || out.Verdict.DropReasoningEffort != tt.drops {
				t.Fatalf("%+v, want a swap that drops the effort: %v", out.Verdict, tt.drops)
			}
			if dropped := len(kinds(out.Effects)) > 0 && kinds(out.Effects)[0] == "effort-dropped:high"; dropped != tt.drops {
				t.Fatalf("effects %v", kinds(out.Effects))
			}
		})
	}
}

func TestForcedEffortStripDropsWhatTheTargetLists(t *testing.T) {
	tests := []struct {
		name  string
		strip []Channel
		drops bool
	}{
		{"not named: kept where listed", nil, false},
		{"the target named", []Channel{chB}, true},
		{"its provider named with *", []Channel{{"p", "*"}}, true},
		{"another target named", []Channel{chC}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.StripReasoningEffort = tt.strip })
			m.step(ModelInfo{Channel: chB, Known: true, Efforts: []string{"high"}})
			openA(m)
			out := m.step(Request{Agent: "a1", Proposed: chA, ReasoningEffort: "high"})
			if out.Verdict.Kind != Swap || out.Verdict.DropReasoningEffort != tt.drops {
				t.Fatalf("%+v, want a swap dropping the effort: %v", out.Verdict, tt.drops)
			}
		})
	}
}
