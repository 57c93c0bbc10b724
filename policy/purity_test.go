package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The policy and its packages are pure: nothing in them reads a clock,
// draws randomness, does I/O or synchronises goroutines; time and input
// come in as arguments.
var forbiddenImports = map[string]bool{
	"os": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true,
	"net": true, "net/http": true, "io/ioutil": true, "syscall": true, "sync": true, "sync/atomic": true,
	"unsafe": true, "runtime": true, "log": true,
}

// clockReads are the time package's functions that read or wait on the clock.
var clockReads = map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true,
	"Tick": true, "NewTimer": true, "NewTicker": true, "AfterFunc": true}

// purePackages: each package under policy/, and what it may take beyond
// the rules above. The state machine, migrate and redact take the standard library
// only, and no time package at all (time is an event's field); the report
// reads JSON lines (gjson, as the codec) and parses their timestamps, but
// its window comes in as input; telemetry reads one record the same way.
var purePackages = []struct {
	dir            string
	external, time bool
}{
	{".", false, false},
	{"jsondepth", false, false},
	{"migrate", false, false},
	{"redact", false, false},
	{"report", true, true},
	{"telemetry", true, true},
}

func TestPolicyIsPure(t *testing.T) {
	dirs, _ := filepath.Glob("*/*.go")
	seen := map[string]bool{".": true}
	for _, f := range dirs {
		if !strings.HasSuffix(f, "_test.go") && !strings.HasPrefix(f, "testdata") {
			seen[filepath.Dir(f)] = true
		}
	}
	for _, p := range purePackages {
		delete(seen, p.dir)
		checkPure(t, p.dir, p.external, p.time)
	}
	for dir := range seen {
		t.Errorf("policy/%s has no purity rules: add it to purePackages", dir)
	}
}

func checkPure(t *testing.T, dir string, external, timePkg bool) {
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no sources: %v", dir, err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			own := strings.HasPrefix(path, "github.com/dsh-resilience/dsh-resilience/policy/")
			if !external && !own && strings.Contains(strings.Split(path, "/")[0], ".") {
				t.Errorf("%s imports %s: it takes the standard library only", name, path)
			}
			if forbiddenImports[path] || path == "time" && !timePkg {
				t.Errorf("%s imports %s: time, randomness and I/O come in as input", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a goroutine at %s: the policy is single-threaded", name, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && clockReads[n.Sel.Name] {
					t.Errorf("%s: time.%s at %s: time comes in as input", name, n.Sel.Name, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}
