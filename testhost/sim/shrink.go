package sim

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
)

// Shrink cuts a failing schedule down to the ops it needs to break the same
// invariant: first everything after the break, then chunks and single ops
// (delta debugging), within a wall-time budget.
func Shrink(rt *testhost.Runtime, s Schedule, budget time.Duration) (Schedule, Break) {
	first := Run(rt, s)
	if len(first.Breaks) == 0 {
		return s, Break{}
	}
	want := first.Breaks[0]
	deadline := time.Now().Add(budget)
	best, bestBreak := s, want
	try := func(c Schedule) bool {
		res := Run(rt, c)
		if len(res.Breaks) > 0 && res.Breaks[0].Invariant == want.Invariant {
			best, bestBreak = c, res.Breaks[0]
			return true
		}
		return false
	}
	// Nothing after the break matters.
	cut := best
	cut.EndMs = want.AtMs
	cut.Ops = nil
	for _, op := range best.Ops {
		if op.At <= want.AtMs {
			cut.Ops = append(cut.Ops, op)
		}
	}
	try(cut)
	for n := 2; len(best.Ops) > 1 && time.Now().Before(deadline); {
		chunk := (len(best.Ops) + n - 1) / n
		removed := false
		for i := 0; i < len(best.Ops) && time.Now().Before(deadline); i += chunk {
			c := best
			c.Ops = append(append([]Op(nil), best.Ops[:i]...), best.Ops[min(i+chunk, len(best.Ops)):]...)
			if try(c) {
				removed = true
				n = max(n-1, 2)
				break
			}
		}
		if !removed {
			if chunk == 1 {
				break
			}
			n = min(2*n, len(best.Ops))
		}
	}
	// The run can end at the break.
	c := best
	c.EndMs = bestBreak.AtMs
	try(c)
	return best, bestBreak
}

// GoTest renders a schedule as a replayable Go test case for sim_test.go.
func GoTest(name string, s Schedule, b Break) string {
	var w strings.Builder
	fmt.Fprintf(&w, "// %s\n", b)
	fmt.Fprintf(&w, "func TestSimRegression%s(t *testing.T) {\n\trequireClean(t, Schedule{Seed: %d, EndMs: %d,\n", name, s.Seed, s.EndMs)
	w.WriteString("\t\tChannels: []Channel{")
	for i, c := range s.Channels {
		if i > 0 {
			w.WriteString(", ")
		}
		fmt.Fprintf(&w, "{%s, %s}", strconv.Quote(c.Provider), strconv.Quote(c.Model))
	}
	fmt.Fprintf(&w, "},\n\t\tHomes: %#v,\n\t\tConfig: %s,\n\t\tOps: []Op{\n", s.Homes, strconv.Quote(s.Config))
	for _, op := range s.Ops {
		fmt.Fprintf(&w, "\t\t\t{ID: %d, At: %d, Kind: %s", op.ID, op.At, op.Kind)
		if op.Kind == OpOutage || op.Kind == OpTurn || op.Kind == OpBackup || op.Kind == OpStream || op.Kind == OpModelInfo || op.Kind == OpPick {
			fmt.Fprintf(&w, ", Ch: %d", op.Ch)
		}
		if op.Prov != "" {
			fmt.Fprintf(&w, ", Prov: %s", strconv.Quote(op.Prov))
		}
		if op.Agent != "" {
			fmt.Fprintf(&w, ", Agent: %s", strconv.Quote(op.Agent))
		}
		if op.N != 0 {
			fmt.Fprintf(&w, ", N: %d", op.N)
		}
		if op.Dur != 0 {
			fmt.Fprintf(&w, ", Dur: %d", op.Dur)
		}
		if op.Kind == OpOutage || op.Kind == OpTool {
			fmt.Fprintf(&w, ", Mode: %s", op.Mode)
		}
		if op.RetryAfterMs != 0 {
			fmt.Fprintf(&w, ", RetryAfterMs: %d", op.RetryAfterMs)
		}
		w.WriteString("},\n")
	}
	w.WriteString("\t\t},\n\t})\n}\n")
	return w.String()
}
