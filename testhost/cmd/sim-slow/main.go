// Command sim-slow runs the simulator's slow-call world (testhost/sim
// slowworld.go, issue #20) over many seeds: channels that turn slow and
// recover under sessions that come and go. `make sim-slow SEEDS=N HOURS=H`.
// The exit status is 1 when an invariant broke.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost/sim"
)

func main() {
	seeds := flag.Int("seeds", 10, "how many seeds")
	from := flag.Int64("from", 1, "the first seed")
	hours := flag.Float64("hours", 2, "virtual hours per seed")
	agents := flag.Int("agents", 12, "agents per seed")
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
	results := sim.Seeds(*from, *seeds, *workers, func(seed int64) sim.SlowResult {
		return sim.RunSlow(rt, seed, sim.SlowOptions{Hours: *hours, Agents: *agents})
	})
	var events, sessions, moved, slows, probes, fast int64
	broke := 0
	for _, r := range results {
		events, sessions, moved = events+r.Events, sessions+r.Sessions, moved+r.Moved
		slows, probes, fast = slows+r.Slows, probes+r.Probes, fast+r.Fast
		if len(r.Breaks) > 0 {
			broke++
			for _, b := range r.Breaks[:min(5, len(r.Breaks))] {
				fmt.Printf("seed %d: %s\n", r.Seed, b)
			}
		}
	}
	fmt.Printf("seeds            %d (from %d), %d agents, %.1f virtual hours each\n", *seeds, *from, *agents, *hours)
	fmt.Printf("events simulated %d; %d new sessions, %d of them started off the primary\n", events, sessions, moved)
	fmt.Printf("slow breakers    %d turned slow, %d probes, %d closed by a call in time\n", slows, probes, fast)
	fmt.Printf("invariant breaks %d seeds\n", broke)
	fmt.Printf("wall time        %s\n", time.Since(start).Round(time.Millisecond))
	if broke > 0 {
		os.Exit(1)
	}
}
