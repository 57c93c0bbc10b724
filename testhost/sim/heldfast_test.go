package sim

import "testing"

// The incremental checks (heldfast.go, unavail.go) against their references,
// computed from scratch after every step: any difference is a "fast-check"
// break. The worlds are bad days in small: many agents, many outages, so
// turns are held, channels come back and go, and models go unavailable.
func TestFastChecksAgree(t *testing.T) {
	VerifyFast = true
	defer func() { VerifyFast = false }()
	before := [3]int64{verified.heldUsable.Load(), verified.heldNot.Load(), verified.unavailable.Load()}
	for seed := int64(1); seed <= 3; seed++ {
		res := Run(rt, Generate(seed, Options{Hours: 1, Agents: 80, OutagesPerHour: 60}))
		for _, b := range res.Breaks {
			t.Errorf("seed %d: %s", seed, b)
		}
	}
	got := [3]int64{verified.heldUsable.Load() - before[0], verified.heldNot.Load() - before[1], verified.unavailable.Load() - before[2]}
	t.Logf("compared: %d held agents usable, %d not, %d unavailable channels", got[0], got[1], got[2])
	if got[0] == 0 || got[1] == 0 || got[2] == 0 {
		t.Errorf("a comparison never saw both answers: %v (held usable, held not, unavailable)", got)
	}
}
