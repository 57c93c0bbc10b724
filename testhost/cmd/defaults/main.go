// Command defaults writes host-shim/policy-defaults.js, the settings card's
// defaults as the module resolves them (`go generate ./testhost/`);
// testhost's TestDefaultsCurrent fails while the file is stale.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/dsh-resilience/dsh-resilience/testhost"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "defaults:", err)
		os.Exit(1)
	}
}

func run() error {
	root, err := testhost.RepoRoot()
	if err != nil {
		return err
	}
	js, err := testhost.DefaultsJS()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(root, filepath.FromSlash(testhost.DefaultsPath)), []byte(js), 0o644)
}
