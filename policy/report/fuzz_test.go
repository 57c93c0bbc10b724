package report

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzReport reads arbitrary text as one or two hosts' logs, in batches of
// any size. Whatever the lines, the report must come out (no panic), as
// valid JSON, with every non-blank line either a record or skipped.
// Seeds: testdata/fuzz/FuzzReport/, and the lines below.
func FuzzReport(f *testing.F) {
	for _, s := range []string{
		`{"at":"2026-12-01T00:00:01Z","type":"circuit-open","channel":{"provider":"p","model":"a"},"cause":"SERVER"}`,
		`{"at":"2026-12-01T00:00:01Z","type":"input","export":"restore","health":{"channels":[null,{"channel":{"provider":"p","model":"a"},"state":"open"}]}}`,
		`{"at":"2026-12-01T00:00:02Z","type":"input","export":"decide","event":{"kind":"request","agent":"s","proposed":{"provider":"p","model":"a"}}}
{"at":"2026-12-01T00:00:02Z","type":"input","export":"decide","event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1796083202000,"chunks":0}}
{"at":"2026-12-01T00:00:03Z","type":"input","export":"decide","event":{"kind":"request-error","agent":"s","provider":"p","failure":{"code":"RATE_LIMIT","providerRetryAfterMs":60000}}}
{"at":"2026-12-01T00:00:04Z","type":"circuit-open","channel":{"provider":"p","model":"a"},"cause":"RATE_LIMIT"}
{"at":"2026-12-01T00:00:05Z","type":"failover","agent":"s","from":{"provider":"p","model":"a"},"to":"q/b","code":"RATE_LIMIT"}
{"at":"2026-12-01T00:00:06Z","type":"give-up","agent":"s","channel":"q/b","reason":"budget-exhausted","code":"SERVER"}
{"at":"2026-12-01T00:00:07Z","type":"stall","route":"p/*"}
{"at":"2026-12-01T00:00:08Z","type":"probe-result","channel":"p/a","ok":false,"code":"SERVER"}
{"at":"2026-12-01T00:00:09Z","type":"input","export":"decide","event":{"kind":"settled","agent":"s"}}
{"at":"2026-12-01T00:00:09Z","type":"circuit-closed","channel":"p/a"}`,
		`{"at":"2026-12-01T00:00:00Z","type":"failover"}`,
		"not json\n\n[]\nnull",
	} {
		f.Add([]byte(s), uint8(3), true)
	}
	f.Fuzz(func(t *testing.T, text []byte, batch uint8, twoLogs bool) {
		lines := bytes.Split(text, []byte("\n"))
		logs := [][][]byte{lines}
		if twoLogs {
			var a, b [][]byte
			for i, l := range lines {
				if i%2 == 0 {
					a = append(a, l)
				} else {
					b = append(b, l)
				}
			}
			logs = [][][]byte{a, b}
		}
		n := int(batch%16) + 1
		acc := New(Window{}, len(logs))
		next := make([]int, len(logs))
		for {
			log, ok := acc.Need()
			if !ok {
				break
			}
			part := logs[log][next[log]:min(len(logs[log]), next[log]+n)]
			next[log] += len(part)
			if err := acc.Feed(log, part, next[log] == len(logs[log])); err != nil {
				t.Fatal(err)
			}
		}
		rep := acc.Finish()
		out, err := json.Marshal(rep)
		if err != nil || !json.Valid(out) {
			t.Fatalf("the report is no JSON: %v", err)
		}
		blank := 0
		for _, l := range lines {
			if len(bytes.TrimSpace(l)) == 0 {
				blank++
			}
		}
		if rep.Records+rep.Skipped != len(lines)-blank {
			t.Fatalf("%d records and %d skipped of %d lines (%d blank)", rep.Records, rep.Skipped, len(lines), blank)
		}
	})
}
