package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The golden reports were made by the JavaScript report this package
// replaced (host-shim/report.js computeReport), over the same logs: each
// testdata/<name>.golden.json is what it answered for testdata/<name>.jsonl
// (or <name>.0.jsonl, <name>.1.jsonl, ...: several hosts' logs), over the
// window in <name>.window.json when there is one. The port must answer the
// same, number for number.
func TestGolden(t *testing.T) {
	goldens, err := filepath.Glob("testdata/*.golden.json")
	require.NoError(t, err)
	require.NotEmpty(t, goldens)
	for _, g := range goldens {
		name := strings.TrimSuffix(filepath.Base(g), ".golden.json")
		t.Run(name, func(t *testing.T) {
			logs := logFiles(t, name)
			var w Window
			if b, err := os.ReadFile(filepath.Join("testdata", name+".window.json")); err == nil {
				var win struct{ FromMs, ToMs *int64 }
				require.NoError(t, json.Unmarshal(b, &win))
				if win.FromMs != nil {
					w.FromMs, w.HasFrom = *win.FromMs, true
				}
				if win.ToMs != nil {
					w.ToMs, w.HasTo = *win.ToMs, true
				}
			}
			for _, batch := range []int{1, 7, 2000} {
				got := reportOf(t, w, logs, batch)
				want, err := os.ReadFile(g)
				require.NoError(t, err)
				requireSameJSON(t, want, got, "batches of %d lines", batch)
			}
		})
	}
}

// logFiles are a golden case's logs, each as its lines.
func logFiles(t *testing.T, name string) [][][]byte {
	paths := []string{filepath.Join("testdata", name+".jsonl")}
	if _, err := os.Stat(paths[0]); err != nil {
		paths, _ = filepath.Glob(filepath.Join("testdata", name+".[0-9].jsonl"))
	}
	require.NotEmpty(t, paths, name)
	var logs [][][]byte
	for _, p := range paths {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		logs = append(logs, splitLines(b))
	}
	return logs
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 2*MaxLineBytes)
	for sc.Scan() {
		out = append(out, bytes.Clone(sc.Bytes()))
	}
	return out
}

// reportOf feeds the logs as the shim does: batches of n lines, to the log
// the merge needs.
func reportOf(t testing.TB, w Window, logs [][][]byte, n int) []byte {
	a := New(w, len(logs))
	next := make([]int, len(logs))
	for {
		log, ok := a.Need()
		if !ok {
			break
		}
		lines := logs[log][next[log]:min(len(logs[log]), next[log]+n)]
		next[log] += len(lines)
		require.NoError(t, a.Feed(log, lines, next[log] == len(logs[log])))
	}
	b, err := json.Marshal(a.Finish())
	require.NoError(t, err)
	return b
}

// requireSameJSON compares two documents as values: the same keys, the
// same numbers, whatever their spelling or order.
func requireSameJSON(t testing.TB, want, got []byte, msg string, args ...any) {
	t.Helper()
	var w, g any
	require.NoError(t, json.Unmarshal(want, &w))
	require.NoError(t, json.Unmarshal(got, &g))
	require.Equal(t, w, g, append([]any{msg}, args...)...)
}
