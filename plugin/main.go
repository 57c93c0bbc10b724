// Command plugin is the dsh-resilience policy module: an Extism plugin built
// with standard Go for wasip1 (-buildmode=c-shared, so the host calls
// _initialize once, then the exports).
//
// Each export reads its JSON parameter from the Extism input, runs the codec,
// and writes the JSON result to the Extism output, or the error text to the
// Extism error and returns 1; a host that knows the direct path (direct.go)
// hands the input over and takes the result through the module's memory
// instead. A panic anywhere becomes such an error rather than a trap, so the
// instance stays usable; the host still recreates an instance after any trap
// it does see.
package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/extism/go-pdk"
)

// module holds the policy state for the life of the instance. An instance is
// single-threaded, so nothing else guards it. Its output buffer is shared
// across calls: pdk.Output copies it out before the next call.
var module = codec.Module{ShareOutput: true}

// faultHook is nil in every shipped build. A test build (tag dshr_fault) sets
// it to make exports trap, so the shim's fail-open path is proven against a
// real trap in the real host rather than a stand-in.
var faultHook func(export string)

func call(export string) (rc int32) {
	if paceGC(export) {
		defer runtime.Gosched() // last, after the answer is out: see yielding below
	}
	if faultHook != nil {
		faultHook(export)
	}
	defer func() {
		if r := recover(); r != nil {
			pdk.SetErrorString(fmt.Sprintf("%s: internal error: %v", export, r))
			rc = 1
		}
	}()
	// Whether the host handed the input over directly (direct.go); either
	// way the flags hold for this one call's input and answer only.
	onDirect := direct.on
	direct.on, direct.out, direct.hasOut = false, nil, false
	var in []byte
	if onDirect {
		in = direct.inputBuf[:direct.n]
	} else {
		in = input()
	}
	out, err := module.Call(export, in)
	if err != nil {
		pdk.SetErrorString(export + ": " + err.Error())
		return 1
	}
	if onDirect {
		direct.out, direct.hasOut = out, true // the module's shared buffer: valid until the next call
		return 0
	}
	pdk.Output(out)
	return 0
}

//go:wasmexport configure
func configure() int32 { return call("configure") }

//go:wasmexport resolve
func resolve() int32 { return call("resolve") }

//go:wasmexport decide
func decide() int32 { return call("decide") }

//go:wasmexport snapshot
func snapshot() int32 { return call("snapshot") }

//go:wasmexport restore
func restore() int32 { return call("restore") }

//go:wasmexport inspect
func inspect() int32 { return call("inspect") }

// Yielding. The runtime's own goroutines (the collector's mark worker and
// the background sweeper) run only when the goroutine running an export
// yields, and an export never blocks: without a yield they never ran, the
// collection's marking was left wholly to allocating calls (at least 64 KB
// of scanning per assist), and finished cycles were slow to free their
// spans. At 10^4 agents in flight over 9*10^5 decisions (make bench's scale
// case) linear memory grew to 174 MB for ~16 MB live, and the slowest 1 % of
// failure decisions took 132 µs in wazero; yielding once per call kept
// memory at 29 MB and that p99 at 62 µs (the slowest: 305 -> 92 µs), the
// median unchanged.
//
// A yield is not free: it is a round trip through the scheduler, which in a
// wasm guest unwinds and rewinds the stack. Replaying an hour of bench-day's
// calls (600 agents: cmd/guestreplay) in wazero, a call took 40.6 µs
// yielding every time and 32-34 µs never yielding. So the relaxed pace (a
// large table, whose collections are large) yields every call, and the eager
// one (a small table, small collections that allocating calls finish
// quickly) every fewYieldEvery calls: in make bench's scale case the 1x2
// decisions went from 14.1 / 37.7 µs (p50 / p99) to 10.9 / 29.1 for
// requests and from 50.1 / 90.0 to 41.8 / 63.4 for failures after the
// host's retries, with guest memory after 10^3 and 10^5 sequential agents
// unchanged (5.00 and 6.50 MB) and the 10^4-agent case as it was.

// The guest's collector pace. Linear memory never shrinks, so its
// high-water mark is what a host pays for good; and in a single-threaded
// guest every collection's marking is paid by the calls that allocate while
// it runs, in proportion to what they allocate over the pace. So: collect
// eagerly while the policy holds few agents (Go's default lets the heap reach
// 4 MB before its first collection, and 10^5 agents one after another then
// cost 3 MB more than 10^3), and at a relaxed pace once it holds many (10^4
// agents in flight: at 25 % the marking made the slowest 1 % of decisions 5x
// slower; at 200 % the heap may reach three times the live state, a few MB).
// The switch goes by the agent table's size, not the live heap's: the heap
// also holds the runtime's own, and its size moved the switch with every
// unrelated change. Measured by make bench (testhost/scale_test.go).
const (
	eagerGCPercent   = 25
	relaxedGCPercent = 200
	manyAgents       = 2048 // more than the table keeps idle (policy/agents.go)
	gcCheckEvery     = 1024 // calls between looks
	fewYieldEvery    = 16   // calls between yields while the table is small
)

var gc = struct {
	calls   int
	percent int
	report  bool // the instance reports (report-logs.js gives a report one of its own)
}{percent: eagerGCPercent}

func init() { debug.SetGCPercent(eagerGCPercent) }

// paceGC picks the collector's pace from the agent table's size, now and
// then, and says whether this call should yield. An instance that reports
// goes to the relaxed pace for good: it lives for one report, its calls are
// megabyte batches, and at the eager pace a third of a 10^5-line report's
// time in Node was the collector's (2.6 s against 0.16 s natively).
func paceGC(export string) (yield bool) {
	gc.calls++
	if !gc.report && len(export) > 7 && export[:7] == "report-" {
		gc.report, gc.percent = true, relaxedGCPercent
		debug.SetGCPercent(relaxedGCPercent)
	}
	if !gc.report && gc.calls%gcCheckEvery == 0 {
		want := eagerGCPercent
		if module.Agents() > manyAgents {
			want = relaxedGCPercent
		}
		if want != gc.percent {
			gc.percent = want
			debug.SetGCPercent(want)
		}
	}
	return gc.percent == relaxedGCPercent || gc.calls%fewYieldEvery == 0
}

// main is required by the toolchain but never runs in c-shared mode.
func main() {}
