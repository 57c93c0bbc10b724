package testhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// The report's exports in the built module: every input and answer of a
// report over each of policy/report's golden logs fits its WIT type, and
// the report is the golden one (so the wasm build answers what the native
// package does).
func TestReportExportsInTheModule(t *testing.T) {
	dir := filepath.Join("..", "policy", "report", "testdata")
	goldens, err := filepath.Glob(filepath.Join(dir, "*.golden.json"))
	require.NoError(t, err)
	in := newInstance(t) // one instance for every report: each ends and frees its own
	call := func(export string, input any) []byte {
		t.Helper()
		var b []byte
		if input != nil {
			b, err = json.Marshal(input)
			require.NoError(t, err)
			require.NoError(t, contract.ValidateJSON(paramType(t, export), b), "input of %s", export)
		}
		out, err := in.Call(export, b)
		require.NoError(t, err, export)
		checkOutput(t, export, out)
		return out
	}
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".golden.json")
		paths := []string{filepath.Join(dir, name+".jsonl")}
		if _, err := os.Stat(paths[0]); err != nil {
			paths, _ = filepath.Glob(filepath.Join(dir, name+".[0-9].jsonl"))
		}
		begin := map[string]any{}
		if b, err := os.ReadFile(filepath.Join(dir, name+".window.json")); err == nil {
			require.NoError(t, json.Unmarshal(b, &begin))
		}
		begin["logs"] = len(paths)
		call("report-begin", begin)
		for i, p := range paths { // each log whole: the merge asks for the next one
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			lines := strings.Split(string(b), "\n")
			progress := call("report-feed", map[string]any{"log": i, "lines": lines, "end": true})
			require.Equal(t, i+1 < len(paths), gjson.GetBytes(progress, "need").Exists(), name)
		}
		got := call("report-end", nil)
		want, err := os.ReadFile(g)
		require.NoError(t, err)
		var w, gv any
		require.NoError(t, json.Unmarshal(want, &w))
		require.NoError(t, json.Unmarshal(got, &gv))
		require.Equal(t, w, gv, name)
	}
}
