package codec

import (
	"bytes"
	"encoding/json"
	"testing"
)

// The one-pass reader takes the shim's form and nothing it would read
// otherwise than the general reader: where it says yes, both read the same.
func FuzzFeedBatch(f *testing.F) {
	lines := []string{`{"at":"2026-12-06T05:00:00.000Z","type":"failover","from":{"provider":"p","model":"a"}}`,
		"plain", "", `quote " and \ slash`, "tab\tnew\nline", "模型-β 🙂", "\u2028", "<&>", "\x01"}
	for _, in := range []string{
		`{"log":0,"end":false,"lines":[]}`, `{"log":3,"end":true,"lines":["a","b"]}`,
		`{"log":0,"end":false,"lines":["\ud83d\ude42"]}`, `{"log":0,"end":false,"lines":["\u00e9\/"]}`,
		`{"log":01,"end":false,"lines":[]}`, `{"log":0, "end":false,"lines":[]}`, `{"log":0,"end":false,"lines":[1]}`,
		`{"log":0,"end":false,"lines":["a"],"x":1}`, `{"log":0,"end":false,"lines":["a"]} `, `{"log":0,"end":false,"lines":["\ud800"]}`,
	} {
		f.Add([]byte(in))
	}
	for _, l := range lines {
		b, _ := json.Marshal(map[string]any{"lines": []string{l, l}})
		f.Add(append([]byte(`{"log":1,"end":true,`), b[1:]...))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		log, end, got, ok := feedBatch(in)
		if !ok {
			return
		}
		wlog, wend, want, err := readFeed(in)
		if err != nil {
			t.Fatalf("%q: the one-pass reader took what the general one refuses: %v", in, err)
		}
		if log != wlog || end != wend || len(got) != len(want) {
			t.Fatalf("%q: read %d %v %d lines, the general reader %d %v %d", in, log, end, len(got), wlog, wend, len(want))
		}
		for i := range got {
			if !bytes.Equal(got[i], want[i]) {
				t.Fatalf("%q: line %d read %q, the general reader %q", in, i, got[i], want[i])
			}
		}
	})
}

// The shim's batches are read by the one-pass reader, a line's escapes and
// all, and its lines outlive the input's buffer.
func TestFeedBatchReadsTheShimsForm(t *testing.T) {
	lines := []string{`{"type":"give-up","code":"QUOTA"}`, "模型-β", `a "quoted" \ line`, "x\ny"}
	b, _ := json.Marshal(lines)
	in := append([]byte(`{"log":2,"end":true,"lines":`), append(b, '}')...)
	log, end, got, ok := feedBatch(in)
	if !ok || log != 2 || !end || len(got) != len(lines) {
		t.Fatalf("%q: %d %v %q %v", in, log, end, got, ok)
	}
	for i := range in {
		in[i] = 'x' // the next call's input
	}
	for i, l := range lines {
		if string(got[i]) != l {
			t.Errorf("line %d: %q, want %q", i, got[i], l)
		}
	}
}
