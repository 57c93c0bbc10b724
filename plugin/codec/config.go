package codec

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// configKeys are the config row's keys, as the WIT record `config` names them.
var configKeys = []string{"chain", "failureThreshold", "burstWindowMs", "cooldownMs", "maxCooldownMs",
	"providerThreshold", "backoffBaseMs", "backoffMaxMs", "maxFailovers", "giveUpAfterMs",
	"retryBudgetPercent", "retryBudgetFloor", "spillAfter", "maxClockSkewMs", "recovery", "probes", "classes", "stall", "slow", "tools", "pools", "quota",
	"probeMaxTokens", "providerCooldownMs", "stripReasoningEffort", "persistent",
	"contextReservePercent", "retryUnknown", "unknownMaxRetries", "skill", "hedge", "healthPruneMs", "notify"}

const maxMs = 1 << 53 // JSON numbers are exact up to here

// decodeConfig reads a config row; absent keys take policy's defaults.
// Errors name the key: `config key "cooldownMs": must be ...`.
func decodeConfig(v gjson.Result) (policy.Config, error) {
	cfg := policy.DefaultConfig()
	d := decoder{prefix: "config key", strictNull: true}
	d.object(v, "", configKeys...)
	var ts targets
	for i, c := range d.array(v.Get("chain"), "chain", false) {
		cfg.Chain = append(cfg.Chain, d.chainTarget(c, "chain["+strconv.Itoa(i)+"]", &ts))
	}
	ints := []struct {
		key string
		max uint64
		set func(uint64)
	}{
		{"failureThreshold", math.MaxInt32, func(n uint64) { cfg.FailureThreshold = int(n) }},
		{"burstWindowMs", maxMs, func(n uint64) { cfg.BurstWindowMs = int64(n) }},
		{"cooldownMs", maxMs, func(n uint64) { cfg.CooldownMs = int64(n) }},
		{"maxCooldownMs", maxMs, func(n uint64) { cfg.MaxCooldownMs = int64(n) }},
		{"providerThreshold", math.MaxInt32, func(n uint64) { cfg.ProviderThreshold = int(n) }},
		{"backoffBaseMs", maxMs, func(n uint64) { cfg.BackoffBaseMs = int64(n) }},
		{"backoffMaxMs", maxMs, func(n uint64) { cfg.BackoffMaxMs = int64(n) }},
		{"maxFailovers", math.MaxInt32, func(n uint64) { cfg.MaxFailovers = int(n) }},
		{"giveUpAfterMs", maxMs, func(n uint64) { cfg.GiveUpAfterMs = int64(n) }},
		{"retryBudgetPercent", math.MaxInt32, func(n uint64) { cfg.RetryBudgetPercent = int(n) }},
		{"retryBudgetFloor", math.MaxInt32, func(n uint64) { cfg.RetryBudgetFloor = int(n) }},
		{"spillAfter", math.MaxInt32, func(n uint64) { cfg.SpillAfter = int(n) }},
		{"maxClockSkewMs", maxMs, func(n uint64) { cfg.MaxClockSkewMs = int64(n) }},
		{"probeMaxTokens", math.MaxInt32, func(n uint64) { cfg.ProbeMaxTokens = int(n) }},
		{"providerCooldownMs", maxMs, func(n uint64) { cfg.ProviderCooldownMs = int64(n) }},
		{"contextReservePercent", math.MaxInt32, func(n uint64) { cfg.ContextReservePercent = int(n) }},
		{"unknownMaxRetries", math.MaxInt32, func(n uint64) { cfg.UnknownMaxRetries = int(n) }},
		{"healthPruneMs", maxMs, func(n uint64) { cfg.HealthPruneMs = int64(n) }},
	}
	for _, f := range ints {
		if n, ok := d.uint(v.Get(f.key), f.key, false, f.max); ok {
			f.set(n)
		}
	}
	if r := d.oneOf(v.Get("recovery"), "recovery", false, string(policy.Return), string(policy.Stay)); r != "" {
		cfg.Recovery = policy.Recovery(r)
	}
	if present(v.Get("probes")) {
		cfg.Probes = d.boolean(v.Get("probes"), "probes")
	}
	for i, c := range d.array(v.Get("stripReasoningEffort"), "stripReasoningEffort", false) {
		cfg.StripReasoningEffort = append(cfg.StripReasoningEffort, d.channel(c, "stripReasoningEffort["+strconv.Itoa(i)+"]"))
	}
	if present(v.Get("persistent")) {
		cfg.Persistent = d.boolean(v.Get("persistent"), "persistent")
		if cfg.Persistent && !present(v.Get("backoffMaxMs")) {
			// The mode's cap is dsh-reconnect's 60 s unless the row says
			// otherwise; the resolved config spells it out.
			cfg.BackoffMaxMs = max(policy.PersistentBackoffMaxMs, cfg.BackoffBaseMs)
		}
	}
	if present(v.Get("retryUnknown")) {
		cfg.RetryUnknown = d.boolean(v.Get("retryUnknown"), "retryUnknown")
	}
	if present(v.Get("skill")) {
		cfg.Skill = d.boolean(v.Get("skill"), "skill")
	}
	// Codes are matched without regard to case, so two rows that differ only
	// in case would silently override each other: refuse the second.
	seen := map[string]int{}
	for i, row := range d.array(v.Get("classes"), "classes", false) {
		p := "classes[" + strconv.Itoa(i) + "]"
		if !d.object(row, p, "code", "class") {
			break
		}
		if cfg.Classes == nil {
			cfg.Classes = map[string]policy.Class{}
		}
		raw := d.str(row.Get("code"), p+".code", true)
		code := strings.ToUpper(strings.TrimSpace(raw))
		if d.err == nil && code == "" {
			d.fail(p+".code", "must be a non-empty code")
		}
		if j, dup := seen[code]; dup && d.err == nil {
			d.fail(p+".code", "%q duplicates classes[%d].code (codes match whatever their case)", raw, j)
		}
		seen[code] = i
		cfg.Classes[code] = policy.Class(d.oneOf(row.Get("class"), p+".class", true, classNames()...))
	}
	cfg.Stall = d.stall(v.Get("stall"), "stall")
	cfg.Slow = d.slow(v.Get("slow"), "slow")
	cfg.Hedge = d.hedge(v.Get("hedge"), "hedge")
	cfg.Notify = d.notify(v.Get("notify"))
	d.toolRetryConfig(v.Get("tools"), &cfg.Tools)
	cfg.Pools = d.pools(v.Get("pools"), &ts)
	cfg.Targets = ts.set
	d.quota(v.Get("quota"), &cfg.Quota)
	// The rules apply to a row with pools or a quota object, unless the
	// object says otherwise (`active: false` keeps its settings, rules off);
	// a row with pools cannot turn them off. The resolved config spells
	// `active` out, so it configures to itself.
	cfg.Quota.Active = false
	for _, k := range policy.RuleKeys {
		cfg.Quota.Active = cfg.Quota.Active || present(v.Get(k))
	}
	if a := v.Get("quota.active"); present(a) {
		cfg.Quota.Active = d.boolean(a, "quota.active")
		if !cfg.Quota.Active && len(v.Get("pools").Array()) > 0 {
			d.fail("quota.active", "cannot be false in a row with pools: the quota rules are what pools are for")
		}
	}
	if d.err != nil {
		return cfg, d.err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config key %w", err)
	}
	return cfg, nil
}

func classNames() []string {
	classes := policy.Classes()
	out := make([]string, len(classes))
	for i, c := range classes {
		out[i] = string(c)
	}
	return out
}

func writeConfig(w *writer, c policy.Config) {
	w.beginArray("chain")
	for _, ch := range c.Chain {
		writeTarget(w, ch, c.Targets[ch])
	}
	w.endArray()
	w.int("failureThreshold", int64(c.FailureThreshold))
	w.int("burstWindowMs", c.BurstWindowMs)
	w.int("cooldownMs", c.CooldownMs)
	w.int("maxCooldownMs", c.MaxCooldownMs)
	w.int("providerThreshold", int64(c.ProviderThreshold))
	w.int("backoffBaseMs", c.BackoffBaseMs)
	w.int("backoffMaxMs", c.BackoffMaxMs)
	w.int("maxFailovers", int64(c.MaxFailovers))
	w.int("giveUpAfterMs", c.GiveUpAfterMs)
	w.int("retryBudgetPercent", int64(c.RetryBudgetPercent))
	w.int("retryBudgetFloor", int64(c.RetryBudgetFloor))
	w.int("spillAfter", int64(c.SpillAfter))
	w.int("maxClockSkewMs", c.MaxClockSkewMs)
	w.str("recovery", string(c.Recovery))
	w.boolean("probes", c.Probes)
	codes := make([]string, 0, len(c.Classes))
	for code := range c.Classes {
		codes = append(codes, code)
	}
	sort.Strings(codes) // fixed key order: outputs are compared byte for byte
	w.beginArray("classes")
	for _, code := range codes {
		w.beginObject("")
		w.str("code", code)
		w.str("class", string(c.Classes[code]))
		w.endObject()
	}
	w.endArray()
	writeStallConfig(w, c.Stall)
	writeSlowConfig(w, c.Slow)
	writeToolRetryConfig(w, c.Tools)
	writeQuotaConfig(w, c)
	// Keys added after the quota object go last, in the WIT's order.
	w.int("probeMaxTokens", int64(c.ProbeMaxTokens))
	w.int("providerCooldownMs", c.ProviderCooldownMs)
	w.beginArray("stripReasoningEffort")
	for _, ch := range c.StripReasoningEffort {
		writeChannel(w, "", ch)
	}
	w.endArray()
	w.boolean("persistent", c.Persistent)
	w.int("contextReservePercent", int64(c.ContextReservePercent))
	w.boolean("retryUnknown", c.RetryUnknown)
	w.int("unknownMaxRetries", int64(c.UnknownMaxRetries))
	w.boolean("skill", c.Skill)
	writeHedgeConfig(w, c.Hedge)
	w.int("healthPruneMs", c.HealthPruneMs)
	writeNotifyConfig(w, c.Notify)
}

var channelKeys = []string{"provider", "model"}

func (d *decoder) channel(v gjson.Result, path string) policy.Channel {
	f, ok := d.fields(v, path, channelKeys)
	if !ok {
		return policy.Channel{}
	}
	return policy.Channel{
		Provider: d.strAt(f.get("provider"), path, "provider", true),
		Model:    d.strAt(f.get("model"), path, "model", true),
	}
}

func writeChannel(w *writer, k memberKey, ch policy.Channel) {
	w.beginObject(k)
	w.str("provider", ch.Provider)
	w.str("model", ch.Model)
	w.endObject()
}

// named refuses a channel with a blank provider or model, as the chain's
// validation does (policy.Config.Validate), with the same wording.
func (d *decoder) named(ch policy.Channel, path string) {
	switch {
	case d.err != nil:
	case ch.Provider == "":
		d.fail(path+".provider", "must be a non-empty string")
	case ch.Model == "":
		d.fail(path+".model", "must be a non-empty string")
	}
}
