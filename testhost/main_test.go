package testhost

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Shared by every test in the package: the module, compiled once, and the contract.
var (
	repoRoot string
	wasmPath string
	wasmRT   *Runtime
	contract *WIT
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	var err error
	if repoRoot, err = RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var rebuilt bool
	if wasmPath, rebuilt, err = EnsureWasm(repoRoot); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if rebuilt {
		fmt.Fprintln(os.Stderr, "testhost: built", wasmPath, "(it was missing or older than its sources)")
	}
	src, err := os.ReadFile(filepath.Join(repoRoot, "wit", "policy.wit"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if contract, err = ParseWIT(string(src)); err != nil {
		fmt.Fprintln(os.Stderr, "wit/policy.wit:", err)
		return 2
	}
	ctx := context.Background()
	if wasmRT, err = Load(ctx, wasmPath); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer wasmRT.Close(ctx)
	return m.Run()
}

// newInstance instantiates the shared module for one test and closes it after.
func newInstance(tb testing.TB) *Instance {
	tb.Helper()
	in, err := wasmRT.Instantiate(context.Background())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = in.Close(context.Background()) })
	return in
}
