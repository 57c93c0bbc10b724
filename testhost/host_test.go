package testhost

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A tiny wasm assembler, for modules that make the host's failure paths
// reachable: traps, missing imports, bad signatures.

const (
	wI32 = 0x7f
	wI64 = 0x7e
)

type wImport struct {
	mod, name       string
	params, results []byte
}

type wFunc struct {
	export          string
	params, results []byte
	locals          []byte // raw locals vector, e.g. {1, 1, wI64}; nil for none
	code            []byte // instructions, without the final end
}

func uleb(v uint64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v != 0 {
			b = append(b, c|0x80)
			continue
		}
		return append(b, c)
	}
}

// sleb is the signed LEB128 of v, as i32.const and i64.const take it.
func sleb(v int64) []byte {
	var b []byte
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func wName(s string) []byte { return append(uleb(uint64(len(s))), s...) }

func wVec(items ...[]byte) []byte {
	b := uleb(uint64(len(items)))
	for _, it := range items {
		b = append(b, it...)
	}
	return b
}

func wSection(id byte, content []byte) []byte {
	return append(append([]byte{id}, uleb(uint64(len(content)))...), content...)
}

func wasmModule(imports []wImport, funcs []wFunc) []byte {
	var types, imps, fdecl, exps, codes [][]byte
	sigOf := func(p, r []byte) []byte {
		return append(append([]byte{0x60}, wVec(bytesEach(p)...)...), wVec(bytesEach(r)...)...)
	}
	for i, im := range imports {
		types = append(types, sigOf(im.params, im.results))
		imps = append(imps, append(append(wName(im.mod), wName(im.name)...), append([]byte{0x00}, uleb(uint64(i))...)...))
	}
	for i, f := range funcs {
		ti := len(imports) + i
		types = append(types, sigOf(f.params, f.results))
		fdecl = append(fdecl, uleb(uint64(ti)))
		if f.export != "" {
			exps = append(exps, append(wName(f.export), append([]byte{0x00}, uleb(uint64(len(imports)+i))...)...))
		}
		locals := f.locals
		if locals == nil {
			locals = []byte{0}
		}
		body := append(append(append([]byte{}, locals...), f.code...), 0x0b)
		codes = append(codes, append(uleb(uint64(len(body))), body...))
	}
	exps = append(exps, append(wName("memory"), 0x02, 0x00))
	m := []byte{0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00}
	m = append(m, wSection(1, wVec(types...))...)
	if len(imps) > 0 {
		m = append(m, wSection(2, wVec(imps...))...)
	}
	m = append(m, wSection(3, wVec(fdecl...))...)
	m = append(m, wSection(5, wVec([]byte{0x00, 0x01}))...)
	m = append(m, wSection(7, wVec(exps...))...)
	m = append(m, wSection(10, wVec(codes...))...)
	return m
}

func bytesEach(b []byte) [][]byte {
	out := make([][]byte, len(b))
	for i := range b {
		out[i] = b[i : i+1]
	}
	return out
}

// Instructions.
func call(idx int) []byte { return append([]byte{0x10}, uleb(uint64(idx))...) }
func i32c(v int64) []byte { return append([]byte{0x41}, sleb(v)...) }
func i64c(v int64) []byte { return append([]byte{0x42}, sleb(v)...) }
func cat(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

var (
	localGet0 = []byte{0x20, 0x00}
	localSet0 = []byte{0x21, 0x00}
	drop      = []byte{0x1a}
	trapOp    = []byte{0x00}
)

// The kernel imports of the test module, in function-index order.
var testImports = []wImport{
	{KernelModule, "alloc", []byte{wI64}, []byte{wI64}},          // 0
	{KernelModule, "store_u8", []byte{wI64, wI32}, nil},          // 1
	{KernelModule, "error_set", []byte{wI64}, nil},               // 2
	{KernelModule, "input_load_u64", []byte{wI64}, []byte{wI64}}, // 3
	{KernelModule, "output_set", []byte{wI64, wI64}, nil},        // 4
	{KernelModule, "input_length", nil, []byte{wI64}},            // 5
	{KernelModule, "input_load_u8", []byte{wI64}, []byte{wI32}},  // 6
}

var testModule = wasmModule(testImports, []wFunc{
	{export: InitExport},
	{export: "ok", results: []byte{wI32}, code: i32c(0)},
	{export: "fail", results: []byte{wI32}, code: i32c(1)},
	{export: "boom", results: []byte{wI32}, code: trapOp},
	// err: set the Extism error to "x" and return 1.
	{export: "err", results: []byte{wI32}, locals: []byte{1, 1, wI64}, code: cat(
		i64c(1), call(0), localSet0,
		localGet0, i32c('x'), call(1),
		localGet0, call(2),
		i32c(1))},
	// oob: read 8 input bytes at offset 1000: the kernel refuses, a trap.
	{export: "oob", results: []byte{wI32}, code: cat(i64c(1000), call(3), drop, i32c(0))},
	// bad-store: store into a block that was never allocated.
	{export: "bad-store", results: []byte{wI32}, code: cat(i64c(4096), i32c(1), call(1), i32c(0))},
	// first: output the first input byte.
	{export: "first", results: []byte{wI32}, locals: []byte{1, 1, wI64}, code: cat(
		i64c(1), call(0), localSet0,
		localGet0, i64c(0), call(6), call(1),
		localGet0, i64c(1), call(4),
		i32c(0))},
	{export: "takes-arg", params: []byte{wI32}, results: []byte{wI32}, code: i32c(0)},
})

func loadTestModule(t *testing.T, wasm []byte) *Instance {
	t.Helper()
	ctx := context.Background()
	rt, err := LoadBytes(ctx, wasm)
	require.NoError(t, err)
	t.Cleanup(func() { _ = rt.Close(ctx) })
	in, err := rt.Instantiate(ctx)
	require.NoError(t, err)
	return in
}

func TestHostCallOutcomes(t *testing.T) {
	in := loadTestModule(t, testModule)

	out, err := in.Call("ok", []byte("ignored"))
	require.NoError(t, err)
	require.Equal(t, []byte{}, out)

	out, err = in.Call("first", []byte("hello"))
	require.NoError(t, err)
	require.Equal(t, "h", string(out))

	_, err = in.Call("fail", nil)
	var pe *PluginError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, int32(1), pe.Code)
	require.Equal(t, "fail returned 1 without setting an error", err.Error())

	_, err = in.Call("err", nil)
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "x", pe.Message)
	require.Equal(t, "x", err.Error())

	_, err = in.Call("nope", nil)
	require.ErrorIs(t, err, ErrNoExport)

	_, err = in.Call("takes-arg", nil)
	require.ErrorContains(t, err, "not an Extism export")

	// Still usable after plugin errors.
	out, err = in.Call("first", []byte("z"))
	require.NoError(t, err)
	require.Equal(t, "z", string(out))
}

func TestHostTraps(t *testing.T) {
	for _, tc := range []struct{ export, msg string }{
		{"boom", "unreachable"},
		{"oob", "input_load_u64: offset 1000 (+8) is past the input (3 bytes)"},
		{"bad-store", "store_u8: offset 4096 (+1) is not inside a live kernel block"},
	} {
		t.Run(tc.export, func(t *testing.T) {
			in := loadTestModule(t, testModule)
			_, err := in.Call(tc.export, []byte("abc"))
			var te *TrapError
			require.ErrorAs(t, err, &te)
			require.Equal(t, tc.export, te.Export)
			require.ErrorContains(t, err, tc.msg)
			var pe *PluginError
			require.False(t, errors.As(err, &pe), "a trap is not a plugin error")

			// A trapped instance refuses further calls, saying why.
			_, err = in.Call("ok", nil)
			require.ErrorContains(t, err, "unusable after an earlier trap")
			require.ErrorAs(t, err, &te)
		})
	}
}

func TestHostRefusesUnprovidedImports(t *testing.T) {
	for _, tc := range []struct {
		name string
		imp  wImport
		msg  string
	}{
		{"unimplemented kernel function", wImport{KernelModule, "http_request", []byte{wI64, wI64}, []byte{wI64}},
			"extism:host/env.http_request is not implemented by the test kernel"},
		{"wrong signature", wImport{KernelModule, "input_length", nil, []byte{wI32}},
			"extism:host/env.input_length has signature () -> (i32), the test kernel implements () -> (i64)"},
		{"unknown module", wImport{"env", "abort", nil, nil}, "env.abort: unknown import module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wasm := wasmModule([]wImport{tc.imp}, []wFunc{{export: InitExport}})
			_, err := LoadBytes(context.Background(), wasm)
			require.ErrorContains(t, err, tc.msg)
		})
	}
	_, err := LoadBytes(context.Background(), wasmModule(nil, []wFunc{{export: "ok", results: []byte{wI32}, code: i32c(0)}}))
	require.ErrorContains(t, err, "no _initialize export")
}

func TestHostRealModule(t *testing.T) {
	require.Contains(t, wasmRT.Imports(), "extism:host/env.output_set")
	in := newInstance(t)
	require.Positive(t, in.MemorySize())
	out, err := in.Call("configure", []byte(cfgAB))
	require.NoError(t, err)
	require.JSONEq(t, resolvedDefaults(chA, chB), string(out))
	require.Positive(t, in.KernelBytes())
	require.Empty(t, in.Logs())
	// Instances do not share state.
	other := newInstance(t)
	_, err = other.Call("snapshot", nil)
	require.ErrorContains(t, err, "not configured")
	_, err = in.Call("snapshot", nil)
	require.NoError(t, err)
}

func TestWasmStaleness(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"policy", "plugin/codec", "testhost/preinit", "build"} {
		require.NoError(t, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	src := filepath.Join(root, "plugin", "codec", "x.go")
	require.NoError(t, os.WriteFile(src, []byte("package codec\n"), 0o644))
	wasm := filepath.Join(root, WasmRelPath)

	stale, why, err := wasmStale(root, wasm)
	require.NoError(t, err)
	require.True(t, stale)
	require.Equal(t, "missing", why)

	require.NoError(t, os.WriteFile(wasm, []byte("\x00asm"), 0o644))
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(src, old, old))
	stale, _, err = wasmStale(root, wasm)
	require.NoError(t, err)
	require.False(t, stale)

	future := time.Now().Add(time.Hour)
	require.NoError(t, os.Chtimes(src, future, future))
	stale, why, err = wasmStale(root, wasm)
	require.NoError(t, err)
	require.True(t, stale)
	require.Equal(t, filepath.Join("plugin", "codec", "x.go")+" is newer", why)

	// Non-Go files do not count.
	require.NoError(t, os.Chtimes(src, old, old))
	notes := filepath.Join(root, "policy", "NOTES.md")
	require.NoError(t, os.WriteFile(notes, nil, 0o644))
	require.NoError(t, os.Chtimes(notes, future, future))
	stale, _, err = wasmStale(root, wasm)
	require.NoError(t, err)
	require.False(t, stale)
}

// copyTree copies the files under src/rel into dst/rel.
func copyTree(t *testing.T, src, dst, rel string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dst, 0o755))
	err := filepath.WalkDir(filepath.Join(src, rel), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, r), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, r), b, 0o644)
	})
	require.NoError(t, err)
}

// EnsureWasm builds a missing module, and the build depends on the sources
// only: two copies of the tree in different directories give the same bytes,
// and (unless someone edited the sources meanwhile) the same as build/.
func TestEnsureWasmBuildsReproducibly(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the module twice")
	}
	var built [][]byte
	first := ""
	for i := 0; i < 2; i++ {
		dir := filepath.Join(t.TempDir(), "copy"+string(rune('a'+i)))
		if first == "" {
			for _, rel := range append([]string{"go.mod", "go.sum"}, sourceDirs...) {
				copyTree(t, repoRoot, dir, rel)
			}
			first = dir
		} else {
			for _, rel := range append([]string{"go.mod", "go.sum"}, sourceDirs...) {
				copyTree(t, first, dir, rel)
			}
		}
		path, rebuilt, err := EnsureWasm(dir)
		require.NoError(t, err)
		require.True(t, rebuilt)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		built = append(built, b)
		_, rebuilt, err = EnsureWasm(dir)
		require.NoError(t, err)
		require.False(t, rebuilt, "an up-to-date module is not rebuilt")
	}
	require.True(t, bytes.Equal(built[0], built[1]), "two builds of the same sources differ")
	if stale, why, err := wasmStale(repoRoot, wasmPath); err == nil && !stale {
		repo, err := os.ReadFile(wasmPath)
		require.NoError(t, err)
		require.True(t, bytes.Equal(repo, built[0]), "%s differs from a fresh build of the sources", WasmRelPath)
	} else {
		t.Logf("%s is stale (%s): someone is editing the sources; not compared", WasmRelPath, why)
	}
}

// The module the build ships has its start baked in (testhost/preinit): an
// instance whose _initialize never ran answers as one whose did.
func TestShippedModuleStartIsBaked(t *testing.T) {
	cold, err := wasmRT.instantiate(context.Background())
	require.NoError(t, err)
	t.Cleanup(func() { _ = cold.Close(context.Background()) })
	warm := newInstance(t)
	config := []byte(configJSON([]ch{chA, chB}))
	for _, in := range []*Instance{cold, warm} {
		_, err := in.Call("configure", config)
		require.NoError(t, err)
	}
	req := []byte(`{"nowMs":1700000000000,"event":{"kind":"request","agent":"a1","proposed":` + chA.json() + `}}`)
	a, err := cold.Call("decide", req)
	require.NoError(t, err)
	b, err := warm.Call("decide", req)
	require.NoError(t, err)
	require.Equal(t, string(b), string(a))
}
