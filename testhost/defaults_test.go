package testhost

import (
	"os"
	"path/filepath"
	"testing"
)

// The settings card shows host-shim/policy-defaults.js: a default changed in
// policy/ and not generated again would show the old one.
func TestDefaultsCurrent(t *testing.T) {
	want, err := DefaultsJS()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(DefaultsPath)))
	if err != nil {
		t.Fatalf("%v: run `go generate ./testhost/`", err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what the module resolves: run `go generate ./testhost/` and commit it", DefaultsPath)
	}
}
