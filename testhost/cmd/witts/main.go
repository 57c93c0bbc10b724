// Command witts writes host-shim/policy-types.d.ts, the contract's types as
// TypeScript, from wit/policy.wit (`go generate ./testhost/`). The shim's
// JSDoc imports them and `make typecheck` checks the shim against them;
// testhost's TestTypeScriptCurrent fails while the file is stale.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-resilience/dsh-resilience/testhost"
)

func main() {
	check := flag.Bool("check", false, "only report whether the file is current (exit 1 if not)")
	flag.Parse()
	if err := run(*check); err != nil {
		fmt.Fprintln(os.Stderr, "witts:", err)
		os.Exit(1)
	}
}

func run(check bool) error {
	root, err := testhost.RepoRoot()
	if err != nil {
		return err
	}
	src, err := os.ReadFile(filepath.Join(root, "wit", "policy.wit"))
	if err != nil {
		return err
	}
	w, err := testhost.ParseWIT(string(src))
	if err != nil {
		return fmt.Errorf("wit/policy.wit: %w", err)
	}
	ts, err := w.TypeScript()
	if err != nil {
		return err
	}
	out := filepath.Join(root, filepath.FromSlash(testhost.TypeScriptPath))
	if check {
		old, err := os.ReadFile(out)
		if err != nil || string(old) != ts {
			return fmt.Errorf("%s is not current: run `go generate ./testhost/`", testhost.TypeScriptPath)
		}
		return nil
	}
	return os.WriteFile(out, []byte(ts), 0o644)
}
