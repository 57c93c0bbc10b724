package testhost

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/stretchr/testify/require"
	"github.com/tetratelabs/wazero/api"
)

// transportExport reports whether a module export is transport, not policy:
// _initialize and the direct path's two (plugin/direct.go). The WIT world
// has none of them.
func transportExport(n string) bool {
	return n == InitExport || n == DirectInputExport || n == DirectOutputExport
}

// compareExports diffs a module's exported function names (minus the
// transport ones) against a WIT world's exports: missing are in the world but not
// the module, extra in the module but not the world. Both come back sorted.
func compareExports(module, world []string) (missing, extra []string) {
	have := map[string]bool{}
	for _, n := range module {
		if !transportExport(n) {
			have[n] = true
		}
	}
	want := map[string]bool{}
	for _, n := range world {
		want[n] = true
		if !have[n] {
			missing = append(missing, n)
		}
	}
	for n := range have {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	return missing, extra
}

// exportsErr renders a diff as a test failure message, or nil.
func exportsErr(missing, extra []string) error {
	if len(missing) == 0 && len(extra) == 0 {
		return nil
	}
	return fmt.Errorf("module exports differ from the WIT world: missing (in WIT, not in module) %v; extra (in module, not in WIT) %v", missing, extra)
}

func moduleExportNames() []string {
	var names []string
	for n := range wasmRT.Exports() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func policyWorld(t testing.TB) *World {
	t.Helper()
	w, err := contract.World("policy")
	require.NoError(t, err)
	return w
}

func TestConformanceExportsMatchWIT(t *testing.T) {
	world := policyWorld(t)
	module := moduleExportNames()
	t.Logf("module exports %v; WIT exports %v", module, world.ExportNames())
	t.Logf("module imports %v", wasmRT.Imports())

	require.NoError(t, exportsErr(compareExports(module, world.ExportNames())))
	require.Equal(t, world.ExportNames(), slices.DeleteFunc(slices.Clone(module), transportExport),
		"sorted lists")

	for name, def := range wasmRT.Exports() {
		switch name {
		case InitExport:
			require.Empty(t, def.ParamTypes(), "%s params", name)
			require.Empty(t, def.ResultTypes(), "%s results", name)
			continue
		case DirectInputExport:
			require.Equal(t, []api.ValueType{api.ValueTypeI32}, def.ParamTypes(), "%s params", name)
			require.Equal(t, []api.ValueType{api.ValueTypeI32}, def.ResultTypes(), "%s results", name)
			continue
		case DirectOutputExport:
			require.Empty(t, def.ParamTypes(), "%s params", name)
			require.Equal(t, []api.ValueType{api.ValueTypeI64}, def.ResultTypes(), "%s results", name)
			continue
		}
		require.Empty(t, def.ParamTypes(), "%s: an Extism export takes no wasm params", name)
		require.Equal(t, []api.ValueType{api.ValueTypeI32}, def.ResultTypes(), "%s: an Extism export returns one i32", name)
	}

	codecExports := slices.Clone(codec.Exports)
	sort.Strings(codecExports)
	require.Equal(t, world.ExportNames(), codecExports, "codec.Exports vs the WIT world")
}

// Every export must fit the JSON mapping: at most one parameter (the Extism
// input), and result<T, string> (the output, or the Extism error).
func TestConformanceExportShapes(t *testing.T) {
	for _, f := range policyWorld(t).Exports {
		require.LessOrEqual(t, len(f.Params), 1, "%s: the Extism input carries one parameter", f.Name)
		require.NotNil(t, f.Result, "%s has no result", f.Name)
		require.Equal(t, KindResult, f.Result.Kind, "%s: result must be result<T, string>", f.Name)
		require.NotNil(t, f.Result.Ok, "%s: result<_, E> has no JSON output", f.Name)
		require.Equal(t, "string", f.Result.Err.String(), "%s: the Extism error is a string", f.Name)
	}
	// A variant case's record may not have a field named kind: the case name is there.
	for _, def := range contract.Types {
		if def.Kind != DefVariant {
			continue
		}
		for _, c := range def.Cases {
			if c.Type == nil {
				continue
			}
			payload := contract.Types[c.Type.Name]
			require.NotNil(t, payload, "%s.%s payload", def.Name, c.Name)
			require.Equal(t, DefRecord, payload.Kind, "%s.%s: payload must be a record to be inlined", def.Name, c.Name)
			for _, f := range payload.Fields {
				require.NotEqual(t, "kind", LowerCamel(f.Name), "%s.%s: field collides with kind", def.Name, c.Name)
			}
		}
	}
}

// The comparison can fail: a world with an export the module lacks, and one
// lacking an export the module has.
func TestCompareExportsDetectsDrift(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(repoRoot, "wit", "policy.wit"))
	require.NoError(t, err)
	orig := string(src)
	restoreLine := "  export restore: func(input: restore-input) -> result<restored, string>;\n"
	require.Contains(t, orig, restoreLine)

	extraWIT := strings.Replace(orig, restoreLine, restoreLine+"  /// New.\n  export reset: func() -> result<health, string>;\n", 1)
	lackingWIT := strings.Replace(orig, restoreLine, "", 1)

	for _, tc := range []struct {
		name           string
		src            string
		missing, extra []string
	}{
		{"unchanged", orig, nil, nil},
		{"wit has an extra export", extraWIT, []string{"reset"}, nil},
		{"wit lacks an export", lackingWIT, nil, []string{"restore"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ParseWIT(tc.src)
			require.NoError(t, err)
			w, err := doc.World("policy")
			require.NoError(t, err)
			missing, extra := compareExports(moduleExportNames(), w.ExportNames())
			require.Equal(t, tc.missing, missing, "missing")
			require.Equal(t, tc.extra, extra, "extra")
			if tc.missing == nil && tc.extra == nil {
				require.NoError(t, exportsErr(missing, extra))
			} else {
				require.Error(t, exportsErr(missing, extra))
			}
		})
	}
	// And directly, both directions at once.
	missing, extra := compareExports([]string{"_initialize", "b", "c", "a"}, []string{"d", "a", "b"})
	require.Equal(t, []string{"d"}, missing)
	require.Equal(t, []string{"c"}, extra)
}

func TestWITParse(t *testing.T) {
	require.Equal(t, "dsh-resilience:policy@0.1.0", contract.Package)
	require.Equal(t, []string{"types"}, contract.Interfaces)
	w := policyWorld(t)
	decide, ok := w.Export("decide")
	require.True(t, ok)
	require.Len(t, decide.Params, 1)
	require.Equal(t, "step-input", decide.Params[0].Type.String())
	require.Equal(t, "result<step-output, string>", decide.Result.String())
	require.Contains(t, decide.Doc, "One step of the state machine")

	failure := contract.Types["failure"]
	require.Equal(t, DefRecord, failure.Kind)
	require.Equal(t, "option<u64>", failure.Fields[3].Type.String())
	require.Equal(t, "provider-retry-after-ms", failure.Fields[3].Name)
	require.Equal(t, "providerRetryAfterMs", LowerCamel(failure.Fields[3].Name))
	verdict := contract.Types["verdict"]
	require.Equal(t, DefVariant, verdict.Kind)
	require.Equal(t, "pass", verdict.Cases[0].Name)
	require.Nil(t, verdict.Cases[0].Type)
	require.Equal(t, "wait-then-retry", verdict.Cases[4].Type.String())
	require.Contains(t, verdict.Cases[4].Doc, "wait, then return")
	require.Len(t, contract.Types["failure-class"].Cases, 5)

	// The wider grammar the parser accepts, and what it refuses.
	doc, err := ParseWIT(`package a:b/c@1.2.3-rc.1;
		/* block
		   comment */
		interface i {
			type id = string;
			record r { x: tuple<u8, s64>, y: list<option<id>>, }
			variant v { a, b(r) }
		}
		world w {
			use i.{r, v};
			export f: func(a: r, b: v) -> result<_, string>;
			export g: func() -> result;
			import h: func();
		}`)
	require.NoError(t, err)
	require.Equal(t, "a:b/c@1.2.3-rc.1", doc.Package)
	wd, err := doc.World("w")
	require.NoError(t, err)
	require.Equal(t, []string{"f", "g"}, wd.ExportNames())
	require.Equal(t, "result<_, string>", wd.Exports[0].Result.String())
	require.Len(t, wd.Imports, 1)
	require.NoError(t, doc.ValidateNamed("r", []byte(`{"x":[255,-9223372036854775808],"y":["a",null]}`)))
	require.Error(t, doc.ValidateNamed("r", []byte(`{"x":[256,0],"y":[]}`)))

	for _, bad := range []struct{ src, msg string }{
		{`interface i { flags f { a } }`, `unsupported interface item "flags"`},
		{`interface i { record r { a: nope } }`, `unknown type "nope"`},
		{`interface i { record r { a: u8 } } world w { export f: func(x: r); }`, `unknown type "r"`},
		{`interface i { record r { a: u8 } } world w { use i.{q}; }`, `no such type`},
		{`interface i { record r { a: u8 } record r { b: u8 } }`, `declared twice`},
		{`world w { export i; }`, `unsupported export of an interface`},
		{`interface i { record r { a: u8 }`, `end of file`},
		{`interface i { enum e { } }`, `has no cases`},
	} {
		_, err := ParseWIT(bad.src)
		require.ErrorContains(t, err, bad.msg, bad.src)
	}
}

// The validator can fail: documents that break each rule.
func TestValidatorRejectsBadDocuments(t *testing.T) {
	good := []struct{ typ, doc string }{
		{"step-input", `{"nowMs":1,"event":{"kind":"request","agent":"a","proposed":{"provider":"p","model":"m"}}}`},
		{"step-input", `{"nowMs":1,"event":{"kind":"request","agent":"a","proposed":{"provider":"p","model":"m"},"reasoningEffort":null}}`},
		{"step-output", `{"verdict":{"kind":"pass"},"effects":[]}`},
		{"step-output", `{"verdict":{"kind":"wait","delayMs":5},"effects":[{"kind":"retry","agent":"a","channel":{"provider":"p","model":"m"},"attempt":1,"delayMs":5,"code":"X"}]}`},
		{"config", `{"chain":[]}`},
		{"health", `{"channels":[]}`},
	}
	for _, g := range good {
		require.NoError(t, contract.ValidateNamed(g.typ, []byte(g.doc)), g.doc)
	}
	bad := []struct{ typ, doc, msg string }{
		{"config", `{"chain":[],"cooldwnMs":1}`, `$.cooldwnMs: unknown key`},
		{"config", `{"chain":[{"provider":"p"}]}`, `missing required field "model"`},
		{"config", `{"chain":[{"provider":"p","model":null}]}`, `$.chain[0].model: want string, got null`},
		{"config", `{"chain":[],"failureThreshold":-1}`, `out of range for u32`},
		{"config", `{"chain":[],"failureThreshold":4294967296}`, `out of range for u32`},
		{"config", `{"chain":[],"failureThreshold":1.5}`, `non-integer`},
		{"config", `{"chain":[],"failureThreshold":"3"}`, `want u32, got string`},
		{"config", `{"chain":[],"cooldownMs":18446744073709551616}`, `out of range for u64`},
		{"config", `{"chain":{}}`, `want list<target>`},
		{"config", `[]`, `want record config`},
		{"config", `{"chain":[],"chain":[]}`, `duplicate key`},
		{"config", `{`, `json:`},
		{"config", `{} {}`, `after the top-level value`},
		{"step-input", `{"nowMs":1,"event":{"agent":"a"}}`, `needs "kind"`},
		{"step-input", `{"nowMs":1,"event":{"kind":"explode","agent":"a"}}`, `"explode" is not a case of variant event`},
		{"step-input", `{"nowMs":1,"event":{"kind":"settled","agent":"a","extra":1}}`, `$.event.extra: unknown key for record agent-event`},
		{"step-input", `{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"p","failure":{"code":"X"},"phase":"during-host","rand":0}}`, `"during-host" is not a case of enum phase`},
		{"step-input", `{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"p","failure":{"code":"X"},"phase":"after-host"}}`, `missing required field "rand"`},
		{"step-output", `{"verdict":{"kind":"pass","provider":"p"},"effects":[]}`, `case verdict.pass has no payload`},
		{"step-output", `{"verdict":{"kind":"wait"},"effects":[]}`, `missing required field "delayMs"`},
		{"step-output", `{"verdict":{"kind":"delegate","reason":"tired"},"effects":[]}`, `not a case of enum give-up-reason`},
		{"step-output", `{"verdict":{"kind":"pass"}}`, `missing required field "effects"`},
		{"step-output", `{"verdict":{"kind":"pass"},"effects":[{"kind":"circuit","channel":{"provider":"p","model":"m"},"from":"closed","to":"open","cause":"X","openUntilMs":true}]}`, `openUntilMs: want u64, got boolean`},
		{"restored", `{"channels":1e3}`, `non-integer`},
	}
	for _, b := range bad {
		err := contract.ValidateNamed(b.typ, []byte(b.doc))
		require.ErrorContains(t, err, b.msg, "%s %s", b.typ, b.doc)
	}
	require.ErrorContains(t, contract.ValidateNamed("nope", []byte(`{}`)), `unknown type "nope"`)
	require.ErrorContains(t, contract.ValidateJSON(&Type{Kind: KindResult}, []byte(`{}`)), "no JSON form")
}
