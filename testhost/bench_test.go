package testhost

import (
	"bytes"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/stretchr/testify/require"
)

// The benchmark workload is shared with the Node shim's benchmark
// (testdata/bench-inputs.jsonl), so native, wazero and Node numbers compare.
var benchConfig = []byte(`{"chain":[{"provider":"bench","model":"primary"},{"provider":"bench","model":"secondary"}]}`)

var benchInputs = func() [][]byte {
	raw, err := os.ReadFile("testdata/bench-inputs.jsonl")
	if err != nil {
		panic(err)
	}
	var out [][]byte
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		out = append(out, line)
	}
	return out
}()

// decider is one way of running decide: natively or through wasm.
type decider func(input []byte) ([]byte, error)

func nativeDecider(tb testing.TB) decider {
	var m codec.Module
	_, err := m.Configure(benchConfig)
	require.NoError(tb, err)
	return m.Decide
}

func wasmDecider(tb testing.TB) (decider, *Instance) {
	in := newInstance(tb)
	_, err := in.Call("configure", benchConfig)
	require.NoError(tb, err)
	return func(input []byte) ([]byte, error) { return in.Call("decide", input) }, in
}

func warm(tb testing.TB, d decider, n int) {
	for i := 0; i < n; i++ {
		if _, err := d(benchInputs[i%len(benchInputs)]); err != nil {
			tb.Fatal(err)
		}
	}
}

func benchDecide(b *testing.B, d decider) {
	warm(b, d, 100)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d(benchInputs[i%len(benchInputs)]); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecideNative(b *testing.B) { benchDecide(b, nativeDecider(b)) }

func BenchmarkDecideWazero(b *testing.B) {
	d, _ := wasmDecider(b)
	benchDecide(b, d)
}

// latencies times each of n calls on its own (time.Now around each call).
func latencies(tb testing.TB, d decider, n int) []time.Duration {
	warm(tb, d, 100)
	ds := make([]time.Duration, n)
	for i := range ds {
		in := benchInputs[i%len(benchInputs)]
		start := time.Now()
		_, err := d(in)
		ds[i] = time.Since(start)
		if err != nil {
			tb.Fatal(err)
		}
	}
	slices.Sort(ds)
	return ds
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// benchLatency reports the per-call latency distribution as p50-ns and p99-ns
// (ns/op then includes the cost of the two clock reads per call).
func benchLatency(b *testing.B, d decider) {
	b.ResetTimer()
	ds := latencies(b, d, b.N)
	b.ReportMetric(float64(percentile(ds, 0.50).Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(percentile(ds, 0.99).Nanoseconds()), "p99-ns")
}

func BenchmarkDecideLatencyNative(b *testing.B) { benchLatency(b, nativeDecider(b)) }

func BenchmarkDecideLatencyWazero(b *testing.B) {
	d, _ := wasmDecider(b)
	benchLatency(b, d)
}

// BenchmarkMemoryGrowth reports how many bytes the guest's linear memory grew
// over b.N decide calls (after a warm-up): wasm memory never shrinks, so this
// is the high-water mark a leak would push up.
func BenchmarkMemoryGrowth(b *testing.B) {
	d, in := wasmDecider(b)
	warm(b, d, 1000)
	before := in.MemorySize()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := d(benchInputs[i%len(benchInputs)]); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(in.MemorySize()-before), "guest-bytes-grown")
	b.ReportMetric(float64(in.MemorySize()), "guest-bytes")
}

// TestMemoryFlatMillionCalls makes 10^6 decide calls through wazero, over
// the benchmark cycle and a generated stream (many agents and channels), and
// checks the guest memory stays flat. It takes a while: set DSH_RESILIENCE_LONG=1.
func TestMemoryFlatMillionCalls(t *testing.T) {
	if testing.Short() || os.Getenv("DSH_RESILIENCE_LONG") == "" {
		t.Skip("long: set DSH_RESILIENCE_LONG=1 to run 10^6 calls")
	}
	const calls = 1_000_000
	const limit = 10 << 20
	in := newInstance(t)
	start := in.MemorySize()
	_, err := in.Call("configure", []byte(cfgAB))
	require.NoError(t, err)
	warmUp := in.MemorySize()

	// A pre-generated stream, replayed: generating is not what is measured.
	g := newEventGen(42)
	stream := make([][]byte, 0, 4096)
	for len(stream) < cap(stream) {
		if export, input, _ := g.event(); export == "decide" {
			stream = append(stream, input)
		}
	}
	began := time.Now()
	errs := 0
	var settled uint64
	for i := 0; i < calls; i++ {
		input := benchInputs[i%len(benchInputs)]
		if i%4 != 0 {
			input = stream[i%len(stream)]
		}
		if _, err := in.Call("decide", input); err != nil {
			errs++
			var pe *PluginError
			require.ErrorAs(t, err, &pe)
		}
		if i%100_000 == 0 {
			t.Logf("after %7d calls: guest memory %d bytes", i, in.MemorySize())
		}
		if i == calls/10 {
			settled = in.MemorySize()
		}
	}
	elapsed := time.Since(began)
	end := in.MemorySize()
	t.Logf("guest memory: %d bytes at instantiation, %d after configure, %d after %d calls: grew %d bytes (%d plugin errors, %v, %v/call)",
		start, warmUp, end, calls, end-warmUp, errs, elapsed.Round(time.Millisecond), elapsed/calls)
	t.Logf("growth over the last %d calls: %d bytes", calls-calls/10, end-settled)
	require.Less(t, end-warmUp, uint64(limit), "guest memory grew by %d bytes over %d calls", end-warmUp, calls)
}
