package codec

import (
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

func TestPerTargetSettingsDecodeAndEcho(t *testing.T) {
	row := `{"chain":[{"provider":"p","model":"a","failureThreshold":1,"cooldownMs":5000,"slowFirstTokenMs":20000},{"provider":"p","model":"b"}],` +
		`"pools":[{"name":"main","routes":[{"provider":"p","model":"a"},{"provider":"q","model":"c","cooldownMs":9000}]}]}`
	var m Module
	out, err := m.Configure([]byte(row))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := decodeConfig(gjson.Parse(row))
	if err != nil {
		t.Fatal(err)
	}
	want := map[policy.Channel]policy.TargetSettings{
		{Provider: "p", Model: "a"}: {FailureThreshold: 1, CooldownMs: 5000, SlowFirstTokenMs: 20000},
		{Provider: "q", Model: "c"}: {CooldownMs: 9000},
	}
	for ch, w := range want {
		if cfg.Targets[ch] != w {
			t.Errorf("%s: %+v, want %+v", ch, cfg.Targets[ch], w)
		}
	}
	for _, s := range []string{`{"provider":"p","model":"a","failureThreshold":1,"cooldownMs":5000,"slowFirstTokenMs":20000}`,
		`{"provider":"q","model":"c","cooldownMs":9000}`, `"contextReservePercent":20`} {
		if !strings.Contains(string(out), s) {
			t.Errorf("resolved config lacks %s: %s", s, out)
		}
	}
}

func TestBadTargetSettingsNameTheKey(t *testing.T) {
	cases := []struct{ row, key string }{
		{`{"chain":[{"provider":"p","model":"a","failureThreshold":0}]}`, `"chain[0].failureThreshold": must be at least 1`},
		{`{"chain":[{"provider":"p","model":"a","slowFirstTokenMs":"fast"}]}`, `"chain[0].slowFirstTokenMs"`},
		{`{"chain":[{"provider":"p","model":"a","cooldownMs":99999999}]}`, `"chain[0].cooldownMs": must be between 1 and maxCooldownMs`},
		{`{"chain":[{"provider":"p","model":"a","window":1}]}`, `"chain[0].window"`},
		{`{"chain":[{"provider":"p","model":"a","failureThreshold":2}],"pools":[{"name":"x","routes":[{"provider":"p","model":"a","failureThreshold":5}]}]}`,
			`"pools[0].routes[0]": sets other settings than chain[0]`},
		{`{"pools":[{"name":"x","routes":[{"provider":"p","model":"a","failureThreshold":1001}]}]}`, `"pools[0].routes[0].failureThreshold"`},
		{`{"contextReservePercent":95}`, `"contextReservePercent": must be between 0 and 90`},
	}
	for _, c := range cases {
		var m Module
		_, err := m.Configure([]byte(c.row))
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s: got %v, want an error with %s", c.row, err, c.key)
		}
	}
}

func TestContextFieldsDecode(t *testing.T) {
	_, ev, err := decodeStepInput(gjson.Parse(`{"nowMs":1,"event":{"kind":"request","agent":"a","proposed":{"provider":"p","model":"a"},"contextTokens":300000}}`), nil)
	if err != nil || ev.(policy.Request).ContextTokens != 300000 {
		t.Errorf("request: %+v %v", ev, err)
	}
	_, ev, err = decodeStepInput(gjson.Parse(`{"nowMs":1,"event":{"kind":"model-info","channel":{"provider":"p","model":"a"},"known":true,"efforts":[],"contextWindow":128000}}`), nil)
	if err != nil || ev.(policy.ModelInfo).ContextWindow != 128000 {
		t.Errorf("model-info: %+v %v", ev, err)
	}
	if _, _, err = decodeStepInput(gjson.Parse(`{"nowMs":1,"event":{"kind":"request","agent":"a","proposed":{"provider":"p","model":"a"},"contextTokens":-1}}`), nil); err == nil ||
		!strings.Contains(err.Error(), "event.contextTokens") {
		t.Errorf("negative contextTokens: %v", err)
	}
}
