// Command sim-hedge runs the simulator's hedge world (testhost/sim
// hedgeworld.go, issue #36) over many seeds: channels whose first token turns
// slow and recovers, calls the module hedges within its budget to where its
// failover would go. `make sim-hedge SEEDS=N HOURS=H`. The exit status is 1
// when an invariant broke.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost/sim"
)

func main() {
	seeds := flag.Int("seeds", 10, "how many seeds")
	from := flag.Int64("from", 1, "the first seed")
	hours := flag.Float64("hours", 2, "virtual hours per seed")
	agents := flag.Int("agents", 16, "agents per seed")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "seeds run in parallel")
	flag.Parse()

	ctx := context.Background()
	rt, err := sim.Runtime(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	defer rt.Close(ctx)
	start := time.Now()
	results := sim.Seeds(*from, *seeds, *workers, func(seed int64) sim.HedgeResult {
		return sim.RunHedge(rt, seed, sim.HedgeOptions{Hours: *hours, Agents: *agents})
	})
	var t sim.HedgeResult
	broke := 0
	breaks := map[string]int{}
	for _, r := range results {
		t.Events, t.Requests, t.Sessions = t.Events+r.Events, t.Requests+r.Requests, t.Sessions+r.Sessions
		t.Hedges, t.WonHedge, t.WonPrimary, t.NoWin = t.Hedges+r.Hedges, t.WonHedge+r.WonHedge, t.WonPrimary+r.WonPrimary, t.NoWin+r.NoWin
		t.Refused, t.TargetChecks = t.Refused+r.Refused, t.TargetChecks+r.TargetChecks
		if len(r.Breaks) > 0 {
			broke++
			for _, b := range r.Breaks[:min(5, len(r.Breaks))] {
				fmt.Printf("seed %d: %s\n", r.Seed, b)
			}
			for _, b := range r.Breaks {
				name, _, _ := strings.Cut(b, " at ")
				breaks[name]++
			}
		}
	}
	fmt.Printf("seeds            %d (from %d), %d agents, %.1f virtual hours each\n", *seeds, *from, *agents, *hours)
	fmt.Printf("events simulated %d; %d requests in %d sessions\n", t.Events, t.Requests, t.Sessions)
	fmt.Printf("hedges           %d sent (%d won by the hedge, %d by the first call, %d by neither); %d due checks not hedged\n",
		t.Hedges, t.WonHedge, t.WonPrimary, t.NoWin, t.Refused)
	fmt.Printf("invariant breaks %d seeds %v\n", broke, breaks)
	fmt.Printf("wall time        %s\n", time.Since(start).Round(time.Millisecond))
	if broke > 0 {
		os.Exit(1)
	}
}
