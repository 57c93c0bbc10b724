package codec

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/gjson"
)

// The report through the exports, as the shim calls them, over
// policy/report's golden logs: the writer must say what the package answers,
// which is what the JavaScript report answered.
func TestReportExportsAnswerTheGoldenReports(t *testing.T) {
	dir := filepath.Join("..", "..", "policy", "report", "testdata")
	goldens, err := filepath.Glob(filepath.Join(dir, "*.golden.json"))
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	var m Module // unconfigured: a report needs no policy
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".golden.json")
		paths := []string{filepath.Join(dir, name+".jsonl")}
		if _, err := os.Stat(paths[0]); err != nil {
			paths, _ = filepath.Glob(filepath.Join(dir, name+".[0-9].jsonl"))
		}
		begin := map[string]any{"logs": len(paths)}
		if b, err := os.ReadFile(filepath.Join(dir, name+".window.json")); err == nil {
			require.NoError(t, json.Unmarshal(b, &begin))
			begin["logs"] = len(paths)
		}
		out := call(t, &m, "report-begin", begin)
		require.Equal(t, int64(1<<20), gjson.GetBytes(out, "maxLineBytes").Int())
		logs := make([][]string, len(paths))
		for i, p := range paths {
			b, err := os.ReadFile(p)
			require.NoError(t, err)
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				logs[i] = append(logs[i], sc.Text())
			}
		}
		next := make([]int, len(logs))
		need, more := 0, true
		for more {
			lines := append([]string{}, logs[need][next[need]:min(len(logs[need]), next[need]+500)]...)
			next[need] += len(lines)
			progress := call(t, &m, "report-feed", map[string]any{"log": need, "lines": lines, "end": next[need] == len(logs[need])})
			n := gjson.GetBytes(progress, "need")
			need, more = int(n.Int()), n.Exists()
		}
		got := call(t, &m, "report-end", nil)
		want, err := os.ReadFile(g)
		require.NoError(t, err)
		var w, gv any
		require.NoError(t, json.Unmarshal(want, &w))
		require.NoError(t, json.Unmarshal(got, &gv), "%s", got)
		require.Equal(t, w, gv, name)
	}
}

func TestReportExportsRefuse(t *testing.T) {
	var m Module
	rows := []struct {
		export, input, err string
	}{
		{"report-feed", `{"log":0,"lines":[]}`, "no report begun"},
		{"report-end", ``, "no report begun"},
		{"report-begin", `{"logs":0}`, `"logs": must be at least 1`},
		{"report-begin", `{"fromMs":"yesterday"}`, `"fromMs": must be a time`},
		{"report-begin", `{"window":{}}`, `"window": unknown key`},
		{"report-begin", `{"logs":2}`, ""},
		{"report-feed", `{"log":0,"lines":[7]}`, `"lines[0]": must be a string`},
		{"report-feed", `{"log":2,"lines":[]}`, "no such log"},
		{"report-feed", `{"log":0}`, `"lines": is required`},
		{"report-feed", `{"log":0,"lines":["not json","{\"at\":\"2026-12-01T00:00:00Z\",\"type\":\"boot\"}"],"end":true}`, ""},
	}
	for _, row := range rows {
		_, err := m.Call(row.export, []byte(row.input))
		if row.err == "" {
			require.NoError(t, err, row.input)
		} else {
			require.ErrorContains(t, err, row.err, row.input)
		}
	}
	out, err := m.Call("report-end", nil)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 1}, []int64{gjson.GetBytes(out, "records").Int(), gjson.GetBytes(out, "skipped").Int()})
	_, err = m.Call("report-end", nil)
	require.ErrorContains(t, err, "no report begun", "an ended report is gone")
}

func call(t *testing.T, m *Module, export string, input any) []byte {
	t.Helper()
	var in []byte
	if input != nil {
		var err error
		in, err = json.Marshal(input)
		require.NoError(t, err)
	}
	out, err := m.Call(export, in)
	require.NoError(t, err, "%s %s", export, in)
	require.True(t, gjson.ValidBytes(out), "%s answered %s", export, out)
	return out
}
