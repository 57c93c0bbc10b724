package testhost

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost/preinit"
)

// ModulePath is the Go module whose root holds build/, policy/ and plugin/.
const ModulePath = "github.com/dsh-resilience/dsh-resilience"

// WasmRelPath is the module's build output, relative to the repository root.
const WasmRelPath = "build/dsh-resilience.wasm"

// sourceDirs hold the Go sources the wasm is built from, and the baking of its start.
var sourceDirs = []string{"policy", "plugin", "testhost/preinit"}

// RepoRoot walks up from the working directory to the go.mod of ModulePath.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if f, err := os.Open(filepath.Join(dir, "go.mod")); err == nil {
			sc := bufio.NewScanner(f)
			for sc.Scan() {
				if fields := strings.Fields(sc.Text()); len(fields) == 2 && fields[0] == "module" && fields[1] == ModulePath {
					f.Close()
					return dir, nil
				}
			}
			f.Close()
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("testhost: no go.mod of %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

// EnsureWasm returns the path of build/dsh-resilience.wasm under root,
// building it first if it is missing or older than any .go file under
// policy/ or plugin/ (or go.mod/go.sum). The build is the project's own
// command,
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -o build/dsh-resilience.wasm ./plugin
//
// (with -buildvcs=false, so the output depends on the sources only), its
// start then baked in as the Makefile does (testhost/preinit), written to a
// temporary file and renamed into place, so a concurrent reader never sees
// half a module. rebuilt reports whether it built.
func EnsureWasm(root string) (path string, rebuilt bool, err error) {
	path = filepath.Join(root, WasmRelPath)
	stale, why, err := wasmStale(root, path)
	if err != nil || !stale {
		return path, false, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return path, false, err
	}
	tmp := fmt.Sprintf("%s.tmp-%d", path, os.Getpid())
	defer os.Remove(tmp)
	cmd := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-o", tmp, "./plugin")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return path, false, fmt.Errorf("testhost: building %s (%s): %v\n%s", WasmRelPath, why, err, out.String())
	}
	raw, err := os.ReadFile(tmp)
	if err != nil {
		return path, false, err
	}
	baked, err := preinit.Module(context.Background(), raw)
	if err != nil {
		return path, false, fmt.Errorf("testhost: baking the start of %s: %v", WasmRelPath, err)
	}
	if err := os.WriteFile(tmp, baked, 0o644); err != nil {
		return path, false, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return path, false, err
	}
	return path, true, nil
}

// wasmStale reports whether the wasm at path must be (re)built, and why.
func wasmStale(root, path string) (bool, string, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, "missing", nil
	}
	if err != nil {
		return false, "", err
	}
	built := st.ModTime()
	newer := ""
	check := func(p string, mod time.Time) {
		if newer == "" && mod.After(built) {
			newer = p
		}
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if st, err := os.Stat(filepath.Join(root, f)); err == nil {
			check(f, st.ModTime())
		}
	}
	for _, dir := range sourceDirs {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || !strings.HasSuffix(p, ".go") {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			check(p, info.ModTime())
			return nil
		})
		if err != nil {
			return false, "", err
		}
	}
	if newer != "" {
		rel, _ := filepath.Rel(root, newer)
		return true, rel + " is newer", nil
	}
	return false, "", nil
}
