package codec

import (
	"fmt"
	"math"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// configKeys are the config row's keys, as the WIT record `config` names them.
var configKeys = []string{"chain", "failureThreshold", "cooldownMs", "backoffBaseMs", "backoffMaxMs", "maxFailovers"}

const maxMs = 1 << 53 // JSON numbers are exact up to here

// decodeConfig reads a config row; absent keys take policy's defaults.
// Errors name the key: `config key "cooldownMs": must be ...`.
func decodeConfig(v gjson.Result) (policy.Config, error) {
	cfg := policy.DefaultConfig()
	d := decoder{prefix: "config key"}
	d.object(v, "", configKeys...)
	for i, c := range d.array(v.Get("chain"), "chain", false) {
		cfg.Chain = append(cfg.Chain, d.channel(c, fmt.Sprintf("chain[%d]", i)))
	}
	if n, ok := d.uint(v.Get("failureThreshold"), "failureThreshold", false, math.MaxInt32); ok {
		cfg.FailureThreshold = int(n)
	}
	if n, ok := d.uint(v.Get("cooldownMs"), "cooldownMs", false, maxMs); ok {
		cfg.CooldownMs = int64(n)
	}
	if n, ok := d.uint(v.Get("backoffBaseMs"), "backoffBaseMs", false, maxMs); ok {
		cfg.BackoffBaseMs = int64(n)
	}
	if n, ok := d.uint(v.Get("backoffMaxMs"), "backoffMaxMs", false, maxMs); ok {
		cfg.BackoffMaxMs = int64(n)
	}
	if n, ok := d.uint(v.Get("maxFailovers"), "maxFailovers", false, math.MaxInt32); ok {
		cfg.MaxFailovers = int(n)
	}
	if d.err != nil {
		return cfg, d.err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config key %w", err)
	}
	return cfg, nil
}

func writeConfig(w *writer, c policy.Config) {
	w.beginArray("chain")
	for _, ch := range c.Chain {
		writeChannel(w, "", ch)
	}
	w.endArray()
	w.int("failureThreshold", int64(c.FailureThreshold))
	w.int("cooldownMs", c.CooldownMs)
	w.int("backoffBaseMs", c.BackoffBaseMs)
	w.int("backoffMaxMs", c.BackoffMaxMs)
	w.int("maxFailovers", int64(c.MaxFailovers))
}

func (d *decoder) channel(v gjson.Result, path string) policy.Channel {
	if !d.object(v, path, "provider", "model") {
		return policy.Channel{}
	}
	return policy.Channel{
		Provider: d.str(v.Get("provider"), path+".provider", true),
		Model:    d.str(v.Get("model"), path+".model", true),
	}
}

func writeChannel(w *writer, k string, ch policy.Channel) {
	w.beginObject(k)
	w.str("provider", ch.Provider)
	w.str("model", ch.Model)
	w.endObject()
}
