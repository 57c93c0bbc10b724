package sim

import "testing"

// Clock worlds (clocks.go): hosts whose clocks are offset, drift and step,
// sharing health; every invariant holds, and the old shim's wall clock is
// what the monotonic one fixes.
func TestClockWorlds(t *testing.T) {
	seeds, hours := int64(6), 2.0
	if testing.Short() {
		seeds, hours = 2, 1
	}
	for seed := int64(1); seed <= seeds; seed++ {
		res := RunClocks(rt, seed, Options{Hours: hours})
		t.Logf("seed %d: %d events, %d failures, known %v, %s wall", seed, res.Events, res.Failures, res.Known, res.Wall)
		for _, b := range res.Breaks {
			t.Errorf("seed %d: %s", seed, b)
		}
	}
}
