package sim

import "testing"

// A few seeds of the slow world: channels turn slow and recover; a slow
// channel is never preferred over a routable one that is not, for a new session.
func TestSlowWorld(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		res := RunSlow(rt, seed, SlowOptions{Hours: 2, Agents: 12})
		t.Logf("seed %d: %d events, %d sessions (%d moved off the primary), %d slow, %d probes, %d closed fast, %s wall",
			seed, res.Events, res.Sessions, res.Moved, res.Slows, res.Probes, res.Fast, res.Wall)
		for _, b := range res.Breaks {
			t.Errorf("seed %d: %s", seed, b)
		}
		if res.Slows == 0 || res.Fast == 0 || res.Probes == 0 || res.Moved == 0 {
			t.Errorf("seed %d covered too little: %+v", seed, res)
		}
	}
}
