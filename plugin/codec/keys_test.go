package codec

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The keys added for the replaced plugins' users decode, default and refuse
// by name.
func TestNewKeysDecode(t *testing.T) {
	cfg, err := decodeConfig(gjson.Parse(`{"persistent":true,"probeMaxTokens":64,"providerCooldownMs":120000,
		"stripReasoningEffort":[{"provider":"p","model":"*"},{"provider":"q","model":"m"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Persistent || cfg.BackoffMaxMs != 60_000 || cfg.ProbeMaxTokens != 64 || cfg.ProviderCooldownMs != 120_000 || len(cfg.StripReasoningEffort) != 2 {
		t.Fatalf("%+v", cfg)
	}
	cfg, _ = decodeConfig(gjson.Parse(`{"persistent":true,"backoffMaxMs":5000}`))
	if cfg.BackoffMaxMs != 5000 {
		t.Fatalf("a stated backoffMaxMs is kept: %d", cfg.BackoffMaxMs)
	}
	for in, key := range map[string]string{
		`{"persistent":"yes"}`:                                          `"persistent"`,
		`{"probeMaxTokens":0}`:                                          `"probeMaxTokens"`,
		`{"providerCooldownMs":-5}`:                                     `"providerCooldownMs"`,
		`{"stripReasoningEffort":[{"provider":"p"}]}`:                   `stripReasoningEffort[0]`,
		`{"stripReasoningEffort":[{"provider":"p","model":"m","x":1}]}`: `stripReasoningEffort[0]`,
		`{"retryUnknown":"no"}`:                                         `"retryUnknown"`,
		`{"unknownMaxRetries":-1}`:                                      `"unknownMaxRetries"`,
		`{"unknownMaxRetries":2.5}`:                                     `"unknownMaxRetries"`,
		`{"unknownMaxRetries":1001}`:                                    `"unknownMaxRetries": must be between 0 and 1000`,
	} {
		_, err := decodeConfig(gjson.Parse(in))
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s: %v, want an error naming %s", in, err, key)
		}
	}
}

// reconnect's unknown-error cap: off by default (retryUnknown true, cap 3),
// and a row's own values kept.
func TestUnknownCapKeysDecode(t *testing.T) {
	cfg, err := decodeConfig(gjson.Parse(`{}`))
	if err != nil || !cfg.RetryUnknown || cfg.UnknownMaxRetries != 3 {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, err = decodeConfig(gjson.Parse(`{"retryUnknown":false,"unknownMaxRetries":0}`))
	if err != nil || cfg.RetryUnknown || cfg.UnknownMaxRetries != 0 {
		t.Fatalf("a row's own: %+v %v", cfg, err)
	}
}
