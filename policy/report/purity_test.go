package report

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The report is pure, like the policy: no I/O, no clock, no randomness, no
// goroutines. It reads times (time.Parse) but never the time (time.Now).
func TestReportIsPure(t *testing.T) {
	forbidden := map[string]bool{"os": true, "net": true, "net/http": true, "io/ioutil": true, "syscall": true,
		"math/rand": true, "math/rand/v2": true, "crypto/rand": true, "sync": true, "unsafe": true, "runtime": true, "log": true}
	clock := map[string]bool{"Now": true, "Since": true, "Until": true, "Sleep": true, "After": true, "Tick": true, "NewTimer": true, "NewTicker": true, "AfterFunc": true}
	files, _ := filepath.Glob("*.go")
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
			if path, _ := strconv.Unquote(imp.Path.Value); forbidden[path] {
				t.Errorf("%s imports %s", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a goroutine at %s", name, fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && clock[n.Sel.Name] {
					t.Errorf("%s: time.%s at %s: the window comes in as input", name, n.Sel.Name, fset.Position(n.Pos()))
				}
			}
			return true
		})
	}
}
