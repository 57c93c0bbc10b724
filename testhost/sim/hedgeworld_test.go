package sim

import "testing"

// A few seeds of the hedge world: slow first tokens hedged by the module
// within its budget, to where its failover would go, one answer a request.
func TestHedgeWorld(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		res := RunHedge(rt, seed, HedgeOptions{Hours: 1, Agents: 16})
		t.Logf("seed %d: %d events, %d requests, %d sessions, %d hedges (%d won by the hedge, %d by the first call, %d by neither), %d refused, %s wall",
			seed, res.Events, res.Requests, res.Sessions, res.Hedges, res.WonHedge, res.WonPrimary, res.NoWin, res.Refused, res.Wall)
		for _, b := range res.Breaks {
			t.Errorf("seed %d: %s", seed, b)
		}
		if res.Hedges == 0 || res.WonHedge == 0 || res.WonPrimary == 0 || res.Refused == 0 {
			t.Errorf("seed %d covered too little: %+v", seed, res)
		}
	}
}
