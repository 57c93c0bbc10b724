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

// The policy is pure: standard library only, and nothing from it that reads a
// clock, draws randomness, does I/O or synchronises goroutines.
var forbiddenImports = map[string]bool{
	"os": true, "time": true, "math/rand": true, "math/rand/v2": true, "crypto/rand": true,
	"net": true, "net/http": true, "io/ioutil": true, "syscall": true, "sync": true, "sync/atomic": true,
	"unsafe": true, "runtime": true, "log": true,
}

func TestPolicyIsPure(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no sources: %v", err)
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
			if strings.Contains(strings.Split(path, "/")[0], ".") {
				t.Errorf("%s imports %s: policy takes the standard library only", name, path)
			}
			if forbiddenImports[path] {
				t.Errorf("%s imports %s: time, randomness and I/O come in with events", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok {
				t.Errorf("%s: a goroutine at %s: the policy is single-threaded", name, fset.Position(g.Pos()))
			}
			return true
		})
	}
}
