// Command guestreplay times the guest per event kind: it replays the decide
// inputs of a simulator trace through one or more builds of the module, in
// turn, and prints each build's fastest replay (µs per call, by kind).
//
// It exists because the guest cannot be profiled from the host (wazero's
// CPU profile shows it as one opaque frame): cutting a step out of a build
// and replaying the same calls is how the figures in cmd/sim's benchDay
// comment were taken. Record a trace with the simulator, then replay it:
//
//	go run ./testhost/cmd/sim -seeds 1 -hours 1 -agents 600 -outages 100 -trace /tmp/day.txt
//	go run ./testhost/cmd/guestreplay -hours 1 -agents 600 -outages 100 /tmp/day.txt old.wasm build/dsh-resilience.wasm
//
// The seed and schedule flags must match the trace's: they rebuild its config.
// One instance takes every call, so restarts in the trace are not replayed.
package main

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"regexp"
	"sort"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/dsh-resilience/dsh-resilience/testhost/sim"
)

func main() {
	seed := flag.Int64("seed", 1, "the trace's seed")
	hours := flag.Float64("hours", 1, "the trace's virtual hours")
	agents := flag.Int("agents", 600, "the trace's agents")
	outages := flag.Float64("outages", 100, "the trace's outages per hour")
	rounds := flag.Int("rounds", 5, "replays per build; the fastest is printed")
	flag.Parse()
	if flag.NArg() < 2 {
		fmt.Fprintln(os.Stderr, "usage: guestreplay [flags] trace.txt module.wasm...")
		os.Exit(2)
	}
	config := sim.Generate(*seed, sim.Options{Hours: *hours, Agents: *agents, OutagesPerHour: *outages}).Config
	ins, kinds, err := readTrace(flag.Arg(0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	best := map[string]replay{}
	for range *rounds { // builds in turn, so load swings touch them alike
		for _, w := range flag.Args()[1:] {
			r, err := run(w, config, ins, kinds)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			if b, ok := best[w]; !ok || r.total < b.total {
				best[w] = r
			}
		}
	}
	for _, w := range flag.Args()[1:] {
		fmt.Println(best[w].line(w, len(ins)))
	}
}

var kindRe = regexp.MustCompile(`"event":\{"kind":"([a-z-]+)"`)

// readTrace takes the step inputs of a sim -trace file (the lines that are
// not a step's "->" output) and each one's event kind.
func readTrace(path string) (ins [][]byte, kinds []string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		l := sc.Bytes()
		i := bytes.IndexByte(l, '{')
		if i < 0 || bytes.HasPrefix(bytes.TrimSpace(l), []byte("->")) {
			continue
		}
		if m := kindRe.FindSubmatch(l[i:]); m != nil {
			ins = append(ins, bytes.Clone(l[i:]))
			kinds = append(kinds, string(m[1]))
		}
	}
	return ins, kinds, sc.Err()
}

type replay struct {
	total time.Duration
	by    map[string]time.Duration
	n     map[string]int
	mem   uint64
}

func run(wasm, config string, ins [][]byte, kinds []string) (replay, error) {
	ctx := context.Background()
	rt, err := testhost.Load(ctx, wasm)
	if err != nil {
		return replay{}, err
	}
	defer rt.Close(ctx)
	in, err := rt.Instantiate(ctx)
	if err != nil {
		return replay{}, err
	}
	defer in.Close(ctx)
	if _, err := in.Call("configure", []byte(config)); err != nil {
		return replay{}, err
	}
	r := replay{by: map[string]time.Duration{}, n: map[string]int{}}
	for i, input := range ins {
		start := time.Now()
		_, _ = in.Call("decide", input) // an error is a result here, as in the trace
		d := time.Since(start)
		r.total += d
		r.by[kinds[i]] += d
		r.n[kinds[i]]++
	}
	r.mem = in.MemorySize()
	return r, nil
}

// line prints the total and the kinds that took the most time.
func (r replay) line(wasm string, calls int) string {
	us := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / 1e3 / float64(n) }
	s := fmt.Sprintf("%s: %d calls, %.1f µs/call, guest memory %.1f MiB |", wasm, calls, us(r.total, calls), float64(r.mem)/(1<<20))
	var ks []string
	for k := range r.n {
		ks = append(ks, k)
	}
	sort.Slice(ks, func(a, b int) bool { return r.by[ks[a]] > r.by[ks[b]] })
	for _, k := range ks[:min(6, len(ks))] {
		s += fmt.Sprintf(" %s %d × %.1f µs", k, r.n[k], us(r.by[k], r.n[k]))
	}
	return s
}
