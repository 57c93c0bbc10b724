package testhost

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The shim type-checks against host-shim/policy-types.d.ts (`make typecheck`):
// a contract change that is not regenerated would check the shim against the
// old contract.
func TestTypeScriptCurrent(t *testing.T) {
	want, err := contract.TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(repoRoot, filepath.FromSlash(TypeScriptPath)))
	if err != nil {
		t.Fatalf("%v: run `go generate ./testhost/`", err)
	}
	if string(got) != want {
		t.Fatalf("%s is not what wit/policy.wit generates: run `go generate ./testhost/` and commit it", TypeScriptPath)
	}
}

func TestTypeScriptMapping(t *testing.T) {
	w, err := ParseWIT(`package a:b@1.0.0;
interface types {
  /// A point.
  record point-xy {
    /// Across.
    x-pos: u64,
    tags: list<string>,
    label: option<string>,
    pair: tuple<s32, f64>,
    maybe: list<option<bool>>,
  }
  enum shade { light-grey, %return }
  variant shape {
    /// Nothing at all.
    none,
    dot(point-xy),
  }
  type points = list<point-xy>;
}
world w {
  use types.{point-xy, shape};
  export draw: func(p: point-xy) -> result<shape, string>;
  export reset: func() -> result<shape, string>;
}`)
	if err != nil {
		t.Fatal(err)
	}
	ts, err := w.TypeScript()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"/** A point. */\nexport interface PointXy {\n  /** Across. */\n  xPos: number;\n",
		"  tags: string[];\n  label?: string | null;\n  pair: [number, number];\n  maybe: Array<boolean | null>;\n}",
		"export type Shade =\n  | 'light-grey'\n  | 'return';",
		"export type Shape =\n  | ShapeNone\n  | ShapeDot;",
		"/** Nothing at all. */\nexport interface ShapeNone {\n  kind: 'none';\n}",
		"export interface ShapeDot extends PointXy {\n  kind: 'dot';\n}",
		"export type Points = PointXy[];",
		"export interface WExports {\n  'draw': { input: PointXy; output: Shape };\n  'reset': { input: Record<string, never>; output: Shape };\n}",
	} {
		if !strings.Contains(ts, want) {
			t.Errorf("missing:\n%s\n--- in:\n%s", want, ts)
		}
	}
}

// What the JSON mapping cannot express is refused, naming the type.
func TestTypeScriptRefuses(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`interface i { variant v { a(string) } }`, "v.a: a variant case's payload must be a record"},
		{`interface i { record r { kind: string } }`, "r.kind: the key `kind` is the variant discriminant"},
		{`interface i { record v-a { x: u8 } variant v { a(v-a) } }`, "record v-a and case v.a both become the TypeScript name VA"},
		{`interface i { record r { x: u8 } } world w { use i.{r}; export f: func(a: r, b: r) -> result<r, string>; }`, "export f: 2 parameters"},
		{`interface i { record r { x: u8 } } world w { use i.{r}; export f: func(a: r) -> r; }`, "export f: the result must be result<T, string>"},
	} {
		w, err := ParseWIT(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if _, err := w.TypeScript(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.src, err, tc.want)
		}
	}
}
