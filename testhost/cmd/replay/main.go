// Command replay is the what-if replay (`make replay LOG=… CONFIG=…`): it
// replays the policy inputs of an audit log under the recorded config and
// under CONFIG, and prints where their decisions differ, with totals.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/dsh-resilience/dsh-resilience/testhost/replay"
	"github.com/dsh-resilience/dsh-resilience/testhost/sim"
)

func main() {
	logPath := flag.String("log", "", "the audit log (audit.jsonl)")
	configPath := flag.String("config", "", "config B: the row's config as JSON")
	flag.Parse()
	if *logPath == "" || *configPath == "" {
		fmt.Fprintln(os.Stderr, "usage: replay -log audit.jsonl -config other.json")
		os.Exit(2)
	}
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "replay:", err)
		os.Exit(1)
	}
	f, err := os.Open(*logPath)
	if err != nil {
		die(err)
	}
	inputs, err := replay.Read(f)
	f.Close()
	if err != nil {
		die(err)
	}
	raw, err := os.ReadFile(*configPath)
	if err != nil {
		die(err)
	}
	cfg, err := replay.Config(raw)
	if err != nil {
		die(err)
	}
	ctx := context.Background()
	rt, err := sim.Runtime(ctx)
	if err != nil {
		die(err)
	}
	defer rt.Close(ctx)
	rep, err := replay.Run(ctx, rt, inputs, cfg)
	if err != nil {
		die(err)
	}
	fmt.Printf("replayed %d policy inputs from %s; B is %s\n\n", len(inputs), *logPath, *configPath)
	rep.Print(os.Stdout, *configPath)
}
