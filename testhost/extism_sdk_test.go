package testhost

import (
	"context"
	"os"
	"testing"

	extism "github.com/extism/go-sdk"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero"
)

// sdkPlugin loads the module with the official Extism Go SDK: its own kernel
// (extism-runtime.wasm), its own _initialize handling. The runtime config only
// adds the compilation cache, to keep the suite fast.
func sdkPlugin(t testing.TB) *extism.Plugin {
	t.Helper()
	ctx := context.Background()
	wasm, err := os.ReadFile(wasmPath)
	require.NoError(t, err)
	cache, err := wazero.NewCompilationCacheWithDir(CacheDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cache.Close(ctx) })
	p, err := extism.NewPlugin(ctx,
		extism.Manifest{Wasm: []extism.Wasm{extism.WasmData{Data: wasm}}},
		extism.PluginConfig{
			EnableWasi:    true,
			RuntimeConfig: wazero.NewRuntimeConfig().WithCompilationCache(cache),
			ModuleConfig:  wazero.NewModuleConfig().WithSysNanotime().WithSysWalltime(),
		}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = p.Close(ctx) })
	return p
}

func sdkAnswer(t testing.TB, p *extism.Plugin, export string, input []byte) answer {
	t.Helper()
	rc, out, err := p.Call(export, input)
	if rc != 0 {
		require.Error(t, err, "%s returned %d without an error", export, rc)
		return answer{err: err.Error()}
	}
	require.NoError(t, err, "%s returned 0 with an error", export)
	if out == nil {
		out = []byte{}
	}
	return answer{out: out}
}

func TestExtismSDKMatchesTesthost(t *testing.T) {
	p := sdkPlugin(t)
	in := newInstance(t)

	// The scenarios of one instance, back to back on the same plugin.
	n := 0
	for _, sc := range scenarios() {
		for _, s := range sc.steps {
			if s.on != 0 {
				continue
			}
			want := wasmAnswer(t, in, s.export, []byte(s.in))
			got := sdkAnswer(t, p, s.export, []byte(s.in))
			requireSame(t, n, s.export, []byte(s.in), got, want)
			n++
		}
	}
	// And a generated stream.
	g := newEventGen(99)
	for i := 0; i < 3000; i++ {
		export, input, _ := g.next()
		want := wasmAnswer(t, in, export, input)
		got := sdkAnswer(t, p, export, input)
		requireSame(t, n, export, input, got, want)
		if export == "snapshot" && want.err == "" {
			g.snapshots = append(g.snapshots, want.out)
		}
		n++
	}
	t.Logf("%d calls: the Extism SDK and the testhost agree", n)
}
