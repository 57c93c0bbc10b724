package policy

import "testing"

// What a balance script's output says (the codec reads the JSON and the
// time; this is the rule): a refusal beside a reading is a missing reading.
func TestReadBalance(t *testing.T) {
	for _, tc := range []struct {
		name string
		out  BalanceOutput
		ok   bool
		why  string
	}{
		{"a reading", BalanceOutput{Object: true, HasRemaining: true, Remaining: 4.5, ResetsAtMs: 10}, true, ""},
		{"zero is a reading (of nothing left)", BalanceOutput{Object: true, HasRemaining: true}, true, ""},
		{"not an object", BalanceOutput{}, false, MissingNotJSON},
		{"no remaining", BalanceOutput{Object: true}, false, MissingRemaining},
		{"a bad resetsAt", BalanceOutput{Object: true, HasRemaining: true, Remaining: 1, BadResetsAt: true}, false, MissingResetsAt},
		{"an error beside a reading: the provider refused", BalanceOutput{Object: true, HasRemaining: true, Remaining: 80, Refused: true}, false, MissingRefused},
		{"an error alone", BalanceOutput{Object: true, Refused: true}, false, MissingRefused},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, why := ReadBalance("p", tc.out)
			if r.OK != tc.ok || why != tc.why || r.Provider != "p" {
				t.Fatalf("ReadBalance = %+v %q, want ok %v %q", r, why, tc.ok, tc.why)
			}
			if tc.ok && (r.Remaining != tc.out.Remaining || r.ResetsAtMs != tc.out.ResetsAtMs) {
				t.Fatalf("reading %+v from %+v", r, tc.out)
			}
		})
	}
	// A refused reading never lifts a mark: it is missing, whatever number stood beside it.
	m := quotaSim(t, nil)
	m.s.mark(m.now, "pb", 0, "QUOTA", new([]Effect))
	m.advance(10_000)
	r, _ := ReadBalance("pb", BalanceOutput{Object: true, HasRemaining: true, Remaining: 80, Refused: true})
	m.step(r)
	if !m.s.marked(m.now, "pb") {
		t.Fatal("a refusal lifted the exhaustion mark")
	}
}
