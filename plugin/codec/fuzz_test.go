package codec

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// Fuzz targets for every decoder: configure (the config row), decide (every
// event kind) and restore (health). Malformed input must come back as an
// error naming what is wrong, never a panic, and nothing a decoder accepts
// may make the encoder write invalid JSON. Seeds: testdata/fuzz/<target>/.
// Run one with `go test -fuzz FuzzDecide ./plugin/codec`.

const fuzzConfig = `{"chain":[{"provider":"p","model":"a"},{"provider":"q/r","model":"b/c"}],"failureThreshold":2,"cooldownMs":1000,"tools":{"retry":["fetch","db_*"]},"slow":{"firstTokenMs":1000,"minCalls":1}}`

func FuzzConfigure(f *testing.F) {
	for _, s := range []string{fuzzConfig, `{}`, `{"chain":[]}`, `{"stall":{"purposes":{"compaction":{"idleMs":0}}}}`,
		`{"classes":[{"code":"X","class":"quota"}]}`, `{"recovery":"stay","probes":false}`, `{"slow":{"firstTokenMs":5000,"minCalls":2,"moveRunning":true}}`, `[]`, `null`, `{"chain":[{"provider":"","model":"a"}]}`,
		`{"chain":[{"provider":"p","model":"a","failureThreshold":1,"cooldownMs":5000,"slowFirstTokenMs":20000}],"contextReservePercent":10}`,
		`{"chain":[{"provider":"p","model":"a","failureThreshold":0}]}`,
		`{"chain":[{"provider":"p","model":"a"}],"pools":[{"name":"main","routes":[{"provider":"p","model":"a"}]}]}`,
		`{"chain":[{"provider":"p","model":"a"}],"quota":{"active":false}}`, `{"quota":null,"pools":null}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Module
		out, err := m.Configure(in)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an error with no text")
			}
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("configure wrote invalid JSON: %s", out)
		}
		// The resolved config is a config too: configuring with it changes
		// nothing, quota.active included (it once was an output only, and a
		// resolved config fed back was refused, or turned the rules on).
		back := []byte(gjson.GetBytes(out, "config").Raw)
		again, err := new(Module).Configure(back)
		if err != nil {
			t.Fatalf("the resolved config %s is refused: %v", out, err)
		}
		if !bytes.Equal(out, again) {
			t.Fatalf("configure is not idempotent:\n %s\n %s", out, again)
		}
		// A first run's word (policy.RuleKeys): from no health records, a row
		// without the rule keys must be one the module passes cold.
		if freshPasses(in) {
			var fresh Module
			if _, err := fresh.Configure(in); err != nil {
				t.Fatal(err)
			}
			snap, err := fresh.Snapshot(nil)
			if err != nil {
				t.Fatal(err)
			}
			if !gjson.GetBytes(snap, "coldPass").Bool() {
				t.Fatalf("a row without %v, from no health, gave no cold pass: %s", policy.RuleKeys, snap)
			}
		}
	})
}

// freshPasses is the shim's reading of a first run's word (host-shim/cold-start.js).
func freshPasses(row []byte) bool {
	for _, k := range policy.RuleKeys {
		if v := gjson.GetBytes(row, k); v.Exists() && v.Type != gjson.Null {
			return false
		}
	}
	return true
}

func FuzzDecide(f *testing.F) {
	for _, s := range []string{
		`{"nowMs":1700000000000,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a"},"reasoningEffort":"high"}}`,
		`{"nowMs":1700000000000,"event":{"kind":"request-error","agent":"a1","provider":"p","failure":{"code":"RATE_LIMIT","message":"try again in 20s","status":429,"providerRetryAfterMs":5000},"phase":"after-host","hostRetry":{"mode":"normal","maxRetries":2,"retryableCodes":["RATE_LIMIT"]},"rand":12345}}`,
		`{"nowMs":1,"event":{"kind":"settled","agent":"a1"}}`,
		`{"nowMs":1,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a"},"contextTokens":300000}}`,
		`{"nowMs":1,"event":{"kind":"model-info","channel":{"provider":"p","model":"b"},"known":true,"efforts":[],"contextWindow":128000}}`,
		`{"nowMs":1,"event":{"kind":"disposed","agent":"a1"}}`,
		`{"nowMs":1,"event":{"kind":"wake"}}`,
		`{"nowMs":1,"event":{"kind":"probe-result","channel":{"provider":"p","model":"a"},"ok":false,"failure":{"code":"HTTP_402"}}}`,
		`{"nowMs":1,"event":{"kind":"model-info","channel":{"provider":"p","model":"a"},"known":true,"efforts":["low","high"]}}`,
		`{"nowMs":1,"event":{"kind":"set-backup","channel":{"provider":"q/r","model":"b/c"}}}`,
		`{"nowMs":1,"event":{"kind":"set-backup"}}`,
		`{"nowMs":100000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"purpose":"compaction","openedMs":1,"chunks":2,"lastChunkMs":50,"cancelled":false}}`,
		`{"nowMs":100000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1,"chunks":1,"lastChunkMs":9000,"cancelled":false,"firstTokenMs":8999}}`,
		`{"nowMs":1,"event":{"kind":"tool-result","agent":"a1","call":"c1","tool":"fetch","attempt":1,"failure":{"code":"TOOL_TIMEOUT","message":"timed out"},"timeoutMs":5000,"rand":7}}`,
		`{"nowMs":-1,"event":{"kind":"wake"}}`, `{"nowMs":1e3,"event":{"kind":"wake"}}`, `{"event":{}}`, `"x"`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Module
		if _, err := m.Configure([]byte(fuzzConfig)); err != nil {
			t.Fatal(err)
		}
		// Twice: the second call meets the state the first one left.
		for range 2 {
			out, err := m.Decide(in)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "input") && !strings.Contains(err.Error(), "JSON") {
					t.Fatalf("an error that names no input key: %v", err)
				}
				return
			}
			if !gjson.ValidBytes(out) {
				t.Fatalf("decide wrote invalid JSON for %s: %s", in, out)
			}
		}
	})
}

func FuzzRestore(f *testing.F) {
	for _, s := range []string{
		`{"channels":[{"channel":{"provider":"p","model":"a"},"state":"open","failures":3,"opens":1,"openUntilMs":1700000060000,"lastCode":"RATE_LIMIT","changedAtMs":1700000000000}]}`,
		`{"channels":[{"channel":{"provider":"p","model":"a"},"state":"half-open","failures":0,"openUntilMs":0,"lastCode":""}]}`,
		`{"channels":[]}`, `{}`, `{"channels":[{"channel":{"provider":"p","model":"*"},"state":"open","failures":0,"openUntilMs":0,"lastCode":""}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var m Module
		if _, err := m.Configure([]byte(fuzzConfig)); err != nil {
			t.Fatal(err)
		}
		out, err := m.Restore(in)
		if err != nil {
			return
		}
		if !gjson.ValidBytes(out) {
			t.Fatalf("restore wrote invalid JSON: %s", out)
		}
		// What was restored snapshots and restores again unchanged.
		snap, err := m.Snapshot(nil)
		if err != nil {
			t.Fatal(err)
		}
		var m2 Module
		_, _ = m2.Configure([]byte(fuzzConfig))
		if _, err := m2.Restore(snap); err != nil {
			t.Fatalf("a snapshot %s is refused by restore: %v", snap, err)
		}
		snap2, _ := m2.Snapshot(nil)
		if !bytes.Equal(snap, snap2) {
			t.Fatalf("snapshot -> restore -> snapshot changed:\n %s\n %s", snap, snap2)
		}
	})
}

// An old marks file, whatever its text, folds without an error or a panic,
// takes no more records than it names providers, and leaves health that
// snapshots and restores unchanged.
func FuzzFoldMarks(f *testing.F) {
	for _, s := range []string{
		`{"marks":{"p":{"markedAtMs":1699999999000,"untilMs":1700000060000,"v":1}}}`,
		`{"marks":{"p":{"markedAtMs":1699999999000,"untilMs":1700000060000,"liftedAtMs":1699999999500}}}`,
		`{"marks":{"":{"markedAtMs":1,"untilMs":2}}}`, `{"marks":[1,2]}`, `{not json`, `[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		var m Module
		if _, err := m.Configure([]byte(fuzzConfig)); err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(map[string]any{"nowMs": 1_700_000_000_000, "text": text})
		out, err := m.FoldMarks(in)
		if err != nil {
			t.Fatalf("fold-marks refused %q: %v", text, err)
		}
		v := gjson.ParseBytes(out)
		if !gjson.ValidBytes(out) || v.Get("adopted").Int() > int64(len(v.Get("providers").Array())) {
			t.Fatalf("fold-marks answered %s for %q", out, text)
		}
		snap, err := m.Snapshot(nil)
		if err != nil {
			t.Fatal(err)
		}
		var m2 Module
		_, _ = m2.Configure([]byte(fuzzConfig))
		if _, err := m2.Restore(append([]byte(`{"nowMs":1700000000000,`), snap[1:]...)); err != nil {
			t.Fatalf("a snapshot %s after folding %q is refused by restore: %v", snap, text, err)
		}
	})
}
