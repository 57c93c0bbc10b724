package codec

import (
	"bytes"
	"os"
	"reflect"
	"testing"

	"github.com/tidwall/gjson"
)

// primedHostRetry is a cache that holds the host retry policy of
// fastSamples' request-error, as a module has after the first such failure.
func primedHostRetry(t testing.TB) *hostRetryCache {
	hr := &hostRetryCache{}
	if _, _, err := decodeStepInput(gjson.Parse(fastSamples[1]), hr); err != nil || hr.h == nil {
		t.Fatalf("priming the host retry cache: %v", err)
	}
	return hr
}

var fastSamples = []string{
	`{"nowMs":1700000000000,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a"},"reasoningEffort":"high"}}`,
	`{"nowMs":1700000000000,"event":{"kind":"request-error","agent":"a1","provider":"p","failure":{"code":"RATE_LIMIT","message":"try again in 20s","status":429,"providerRetryAfterMs":5000},"phase":"after-host","hostRetry":{"mode":"normal","maxRetries":2,"retryableCodes":["RATE_LIMIT"]},"rand":12345}}`,
	`{"nowMs":1,"event":{"kind":"request-error","agent":"子代理-1","provider":"代理商-α","failure":{"code":"TRANSPORT"},"phase":"before-host","rand":0}}`,
	`{"event":{"kind":"request","contextTokens":300000,"proposed":{"model":"🙂-mini","provider":"p"},"agent":""},"nowMs":9007199254740992}`,
	`{"nowMs":1,"event":{"kind":"settled","agent":"a1"}}`,
	`{"nowMs":1,"event":{"kind":"disposed","agent":"a1"}}`,
	`{"nowMs":1,"event":{"kind":"wake"}}`,
}

// checkFast asserts that whatever fastStep accepts, the general way decodes
// to the same event, without error.
func checkFast(t *testing.T, in []byte) (fast bool) {
	now, ev, ok := fastStep(in, primedHostRetry(t))
	if !ok {
		return false
	}
	v, err := parse(in)
	if err != nil {
		t.Fatalf("fastStep took %s, which parse refuses: %v", in, err)
	}
	now2, ev2, err := decodeStepInput(v, primedHostRetry(t))
	if err != nil {
		t.Fatalf("fastStep took %s, which decodeStepInput refuses: %v", in, err)
	}
	if now != now2 || !reflect.DeepEqual(ev, ev2) {
		t.Fatalf("%s decodes differently:\n fast    %d %#v\n general %d %#v", in, now, ev, now2, ev2)
	}
	return true
}

// The plain forms the host writes take the fast way; a new host retry
// policy, whitespace, escapes, floats, nulls, duplicates and every error go
// the general way.
func TestFastStep(t *testing.T) {
	for _, s := range fastSamples {
		if !checkFast(t, []byte(s)) {
			t.Errorf("the plain form %s went the general way", s)
		}
	}
	for _, s := range []string{
		`{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"p","failure":{"code":"X"},"phase":"after-host","hostRetry":{"mode":"normal","maxRetries":3,"retryableCodes":[]},"rand":1}}`,
		`{"nowMs":1, "event":{"kind":"wake"}}`,
		`{"nowMs":1,"event":{"kind":"settled","agent":"a\u0031"}}`,
		`{"nowMs":1.0,"event":{"kind":"wake"}}`,
		`{"nowMs":01,"event":{"kind":"wake"}}`,
		`{"nowMs":9007199254740993,"event":{"kind":"wake"}}`,
		`{"nowMs":1,"event":{"kind":"request","agent":null,"proposed":{"provider":"p","model":"a"}}}`,
		`{"nowMs":1,"nowMs":2,"event":{"kind":"wake"}}`,
		`{"nowMs":1,"event":{"agent":"a","kind":"settled"}}`,
		`{"nowMs":1,"event":{"kind":"request","agent":"a"}}`,
		`{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"p","failure":{"code":"X"},"phase":"later","rand":1}}`,
		`{"nowMs":1,"event":{"kind":"wake"}}x`,
		`{"nowMs":1,"event":{"kind":"wake","x":1}}`,
		"{\"nowMs\":1,\"event\":{\"kind\":\"settled\",\"agent\":\"\xff\"}}",
		`{"nowMs":1,"event":{"kind":"wake"}`,
	} {
		if checkFast(t, []byte(s)) {
			t.Errorf("%s took the fast way", s)
		}
	}
}

// The shared benchmark workload (the shim's and wazero's too) takes the fast
// way where it is plain, and decodes the same either way.
func TestFastStepBenchInputs(t *testing.T) {
	raw, err := os.ReadFile("../../testhost/testdata/bench-inputs.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		checkFast(t, line)
	}
}

func FuzzFastStep(f *testing.F) {
	for _, s := range fastSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkFast(t, in) })
}

// A key the general decoder learns must be learned by fastStep too, or every
// input that carries it silently decodes the slow way: fastSamples, all
// taking the fast way, carry every key of the hot events between them.
func TestFastStepKnowsEveryHotKey(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range fastSamples {
		ev := gjson.Get(s, "event")
		ev.ForEach(func(k, v gjson.Result) bool {
			seen[ev.Get("kind").String()+"."+k.String()] = true
			if k.String() == "failure" {
				v.ForEach(func(fk, _ gjson.Result) bool { seen["failure."+fk.String()] = true; return true })
			}
			return true
		})
	}
	for kind, keys := range map[string][]string{"request": requestKeys, "request-error": requestErrorKeys,
		"settled": agentEventKeys, "disposed": agentEventKeys, "failure": failureKeys} {
		for _, k := range keys {
			if !seen[kind+"."+k] {
				t.Errorf("no fast sample carries %s.%s: teach fastStep the key and add a sample", kind, k)
			}
		}
	}
}
