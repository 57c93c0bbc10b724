package policy

import (
	"errors"
	"testing"
)

func TestValidateNamesTheKey(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		key    string
	}{
		{"empty provider", func(c *Config) { c.Chain = []Channel{{Model: "m"}} }, "chain[0].provider"},
		{"empty model", func(c *Config) { c.Chain = []Channel{chA, {Provider: "p"}} }, "chain[1].model"},
		{"duplicate", func(c *Config) { c.Chain = []Channel{chA, chB, chA} }, "chain[2]"},
		{"threshold 0", func(c *Config) { c.FailureThreshold = 0 }, "failureThreshold"},
		{"negative cooldown", func(c *Config) { c.CooldownMs = -1 }, "cooldownMs"},
		{"base 0", func(c *Config) { c.BackoffBaseMs = 0 }, "backoffBaseMs"},
		{"max below base", func(c *Config) { c.BackoffMaxMs = c.BackoffBaseMs - 1 }, "backoffMaxMs"},
		{"negative failovers", func(c *Config) { c.MaxFailovers = -1 }, "maxFailovers"},
		{"empty class code", func(c *Config) { c.Classes = map[string]Class{"": ClassQuota} }, "classes"},
		{"duplicate tools.retry", func(c *Config) { c.Tools.Retry = []string{"web_fetch", "mcp_*", "web_fetch"} }, "tools.retry[2]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			var fe *FieldError
			if err := c.Validate(); !errors.As(err, &fe) || fe.Key != tt.key {
				t.Fatalf("Validate() = %v, want a FieldError for %s", err, tt.key)
			}
		})
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

func TestConfigRefusesBadNewKeys(t *testing.T) {
	for _, tt := range []struct {
		key    string
		mutate func(*Config)
	}{
		{"probeMaxTokens", func(c *Config) { c.ProbeMaxTokens = 0 }},
		{"probeMaxTokens", func(c *Config) { c.ProbeMaxTokens = MaxProbeMaxTokens + 1 }},
		{"providerCooldownMs", func(c *Config) { c.ProviderCooldownMs = -1 }},
		{"stripReasoningEffort[0]", func(c *Config) { c.StripReasoningEffort = []Channel{{"p", ""}} }},
		{"stripReasoningEffort[1]", func(c *Config) { c.StripReasoningEffort = []Channel{chA, chA} }},
		{"unknownMaxRetries", func(c *Config) { c.UnknownMaxRetries = -1 }},
		{"unknownMaxRetries", func(c *Config) { c.UnknownMaxRetries = MaxUnknownMaxRetries + 1 }},
	} {
		c := DefaultConfig()
		tt.mutate(&c)
		err := c.Validate()
		if fe, ok := err.(*FieldError); !ok || fe.Key != tt.key {
			t.Errorf("%s: got %v", tt.key, err)
		}
	}
}
