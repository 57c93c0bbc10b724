package sim

import "testing"

// Clock worlds (clocks.go): hosts whose clocks are offset, drift and step,
// sharing health: every invariant holds.
func TestClockWorlds(t *testing.T) {
	// A few virtual hours here; `make sim` runs a clock world per seed.
	seeds, hours := int64(3), 1.0
	if testing.Short() {
		seeds, hours = 1, 0.5
	}
	for seed := int64(1); seed <= seeds; seed++ {
		res := RunClocks(rt, seed, Options{Hours: hours})
		t.Logf("seed %d: %d events, %d failures, known %v, %s wall", seed, res.Events, res.Failures, res.Known, res.Wall)
		for _, b := range res.Breaks {
			t.Errorf("seed %d: %s", seed, b)
		}
	}
	if clockReachChecks.Load() == 0 {
		t.Error("no trip was looked for on the other hosts: clock-trip-reaches-all checked nothing")
	}
	t.Logf("%d trips looked for on the other hosts", clockReachChecks.Load())
}
