package policy

import (
	"fmt"
	"math"
	"strings"
)

// Defaults. Each is what a long agent task wants when the operator says nothing.
const (
	// DefaultFailureThreshold is how many failures the plugin itself sees on a
	// channel within one burst window (beyond the host's own retries) before
	// opening it. Three rides out a blip without hammering a channel that is down.
	DefaultFailureThreshold = 3
	// DefaultBurstWindowMs: failures further apart than this are not one
	// outage; the count starts again.
	DefaultBurstWindowMs = 120_000
	// DefaultCooldownMs keeps an opened channel out of rotation for a minute
	// the first time: long enough for a rate window to pass, short enough to
	// return promptly. A provider's Retry-After extends it.
	DefaultCooldownMs = 60_000
	// DefaultMaxCooldownMs caps the cooldown, which doubles each time a
	// channel re-opens without having closed: a one-minute rate window and a
	// daily cap are not the same outage, and probing a spent cap every minute
	// all day is noise.
	DefaultMaxCooldownMs = 30 * 60_000
	// DefaultProviderThreshold opens a whole provider when this many distinct
	// models under it are open: by then the platform, not one model, is down.
	DefaultProviderThreshold = 2
	// DefaultBackoffBaseMs is the first same-channel wait (before jitter).
	DefaultBackoffBaseMs = 1_000
	// DefaultBackoffMaxMs caps the exponential part; a provider's Retry-After may
	// still ask for more, and is honoured.
	DefaultBackoffMaxMs = 30_000
	// DefaultMaxFailovers stops an agent from bouncing between sick channels
	// forever: after this many failovers without a success, give the failure back.
	DefaultMaxFailovers = 4
	// DefaultGiveUpAfterMs is how long one agent may spend recovering (from its
	// first failure without a success since) before the failure goes back to
	// the host: long enough to outlast a provider's bad quarter of an hour.
	DefaultGiveUpAfterMs = 15 * 60_000
	// DefaultRetryBudgetPercent and DefaultRetryBudgetFloor bound the plugin's
	// own retries per provider, across every agent of the host: within a
	// minute, at most this percentage of the requests sent to the provider,
	// plus the floor. Fifty agents cannot storm a provider that is failing.
	DefaultRetryBudgetPercent = 20
	DefaultRetryBudgetFloor   = 5
	// DefaultSpillAfter: after this many failures in a row of one request on
	// one channel, its next attempt goes to the next routable target at once
	// (spill.go). Two: a dead primary costs two of its requests and one host
	// backoff (0.5 s with the stock dsh-llm-retry) instead of three and 1.5 s.
	DefaultSpillAfter = 2
	// MaxSpillAfter bounds spillAfter: beyond a few failures the breaker's
	// own threshold (failureThreshold) has long decided.
	MaxSpillAfter = 100
	// DefaultMaxClockSkewMs is how far apart the clocks of hosts sharing
	// health are assumed to be: NTP keeps real hosts within a second; a VM
	// resumed from suspend or a host without NTP drifts by minutes. A record
	// held open is never held longer than its writer observed plus this
	// (merge.go).
	DefaultMaxClockSkewMs = 3 * 60_000
	// DefaultProbeMaxTokens is the output a probe asks for: enough for any
	// model to answer "OK", little enough to cost nothing.
	DefaultProbeMaxTokens = 8
	// MaxProbeMaxTokens bounds probeMaxTokens: a probe is a health check,
	// not a turn, and some routes refuse a tiny cap (a reasoning model may
	// need a few hundred tokens before its first visible one).
	MaxProbeMaxTokens = 4096
	// PersistentBackoffMaxMs is the wait cap a persistent row gets unless it
	// sets backoffMaxMs: dsh-reconnect's 60 s, whose users asked for this mode.
	// (The codec applies it; a row that states backoffMaxMs keeps its own.)
	PersistentBackoffMaxMs = 60_000
	// DefaultUnknownMaxRetries is how many unknown failures in a row one
	// model step may retry when retryUnknown is off: dsh-reconnect's 3.
	DefaultUnknownMaxRetries = 3
	// MaxUnknownMaxRetries bounds unknownMaxRetries: beyond it the cap is
	// retryUnknown left on.
	MaxUnknownMaxRetries = 1000
	// DefaultSkill: the bundled skill (configure-resilience) is not offered
	// to the model unless the row asks for it. A registered skill puts its
	// name and description in every session's skill catalog, which the model
	// reads; dsh-llm-quota-retry promised its users that nothing of it
	// reached the model, and daruma, reconnect and tool-retry never added
	// anything there. dsh-model-failover's users, whose plugin registered its
	// skill unasked, get it back with `skill: true`. The one rule: nothing
	// the plugin adds reaches the model unless a key of the row asks for it.
	DefaultSkill = false
)

// Recovery says where an agent goes once the channel it failed over from is healthy again.
type Recovery string

const (
	// Return: back to the channel it was on before failing over (its "home").
	Return Recovery = "return"
	// Stay: keep the channel it failed over to.
	Stay Recovery = "stay"
)

// Config is the plugin's configuration, flat and immutable once validated.
type Config struct {
	// Chain is the failover order; Chain[0] is the primary.
	Chain              []Channel
	FailureThreshold   int
	BurstWindowMs      int64
	CooldownMs         int64
	MaxCooldownMs      int64
	ProviderThreshold  int // 0 turns provider circuits off
	BackoffBaseMs      int64
	BackoffMaxMs       int64
	MaxFailovers       int
	GiveUpAfterMs      int64
	RetryBudgetPercent int
	RetryBudgetFloor   int
	// SpillAfter: consecutive failures of one request on a channel after
	// which its next attempt goes elsewhere, without tripping the channel
	// (spill.go); 0 turns spilling off.
	SpillAfter int
	// MaxClockSkewMs bounds how far the clocks of hosts sharing health may
	// disagree (merge.go).
	MaxClockSkewMs int64
	Recovery       Recovery
	// Probes: call an opened channel with a tiny real request once its open
	// time is up, instead of waiting for an agent to try it.
	Probes bool
	// ProbeMaxTokens is the output a probe asks for; the shell sends the
	// probe, and reads it from the resolved config.
	ProbeMaxTokens int
	// ProviderCooldownMs is how long an opened provider stays open; 0 keeps
	// it open as long as the longest of its open models (route.go).
	ProviderCooldownMs int64
	// StripReasoningEffort lists the targets a failover never sends a
	// reasoning effort to, whatever their model lists (effort.go). A target
	// whose Model is "*" stands for every model of its provider.
	StripReasoningEffort []Channel
	// Persistent: a failure with nowhere else to go is retried on its channel
	// with capped backoff until the turn is cancelled, instead of being given
	// back after giveUpAfterMs or when no fallback exists (persistent.go).
	Persistent bool
	// RetryUnknown: an unknown failure is counted like a transient one, with
	// no cap of its own (the default). Off, UnknownMaxRetries caps the
	// unknown failures in a row of one model step (unknowncap.go).
	RetryUnknown bool
	// UnknownMaxRetries is how many unknown failures in a row one model
	// step retries when RetryUnknown is off; the next one is handed back.
	UnknownMaxRetries int
	// Classes overrides the class of host codes, e.g. treating
	// CONTEXT_WINDOW_EXCEEDED as model-unavailable to fail over to a model
	// with a larger window.
	Classes map[string]Class
	// Tools is the tool-call retry policy, the row's `tools` object (toolretry.go).
	Tools ToolRetryConfig
	// Stall bounds the silence of streaming model calls, the row's `stall` object (stall.go).
	Stall StallConfig
	// Slow is the slow-call breaker, the row's `slow` object (slow.go).
	Slow SlowConfig
	// Hedge sends a slow call's request to the failover target as well, the row's `hedge` object (hedge.go).
	Hedge HedgeConfig
	// Pools are named failover orders a session may use instead of the chain (pools.go).
	Pools []Pool
	// Quota is the quota rules, the row's `quota` object (quota.go, balance.go).
	Quota QuotaConfig
	// ContextReservePercent is the share of a target's window kept for the
	// answer: a request whose context exceeds the rest skips it (fit.go).
	ContextReservePercent int
	// HealthPruneMs is how long a closed record is kept after its last
	// change and failure: in the health file, the shared store and a
	// restore (persist.go).
	HealthPruneMs int64
	// Notify is the row's webhook receivers (notifytarget.go), and which
	// kinds each chose: the module names them on each notification (notify.go).
	Notify []NotifyTarget
	// Skill offers the bundled skill configure-resilience to the model through
	// the host's skill registry (the shim registers it; DefaultSkill says why
	// it is off by default).
	Skill bool
	// Targets holds per-target settings of chain entries and pool routes
	// that set their own (targets.go); a channel not in it uses the row's.
	Targets map[Channel]TargetSettings
}

// DefaultConfig returns a config with every default and an empty chain.
func DefaultConfig() Config {
	return Config{
		FailureThreshold:   DefaultFailureThreshold,
		BurstWindowMs:      DefaultBurstWindowMs,
		CooldownMs:         DefaultCooldownMs,
		MaxCooldownMs:      DefaultMaxCooldownMs,
		ProviderThreshold:  DefaultProviderThreshold,
		BackoffBaseMs:      DefaultBackoffBaseMs,
		BackoffMaxMs:       DefaultBackoffMaxMs,
		MaxFailovers:       DefaultMaxFailovers,
		GiveUpAfterMs:      DefaultGiveUpAfterMs,
		RetryBudgetPercent: DefaultRetryBudgetPercent,
		RetryBudgetFloor:   DefaultRetryBudgetFloor,
		SpillAfter:         DefaultSpillAfter,
		MaxClockSkewMs:     DefaultMaxClockSkewMs,
		Recovery:           Return,
		Probes:             true,
		ProbeMaxTokens:     DefaultProbeMaxTokens,
		Tools:              DefaultToolRetryConfig(),
		Stall:              DefaultStallConfig(),
		Slow:               DefaultSlowConfig(),
		Hedge:              DefaultHedgeConfig(),
		Quota:              DefaultQuotaConfig(),
		RetryUnknown:       true,
		UnknownMaxRetries:  DefaultUnknownMaxRetries,
		HealthPruneMs:      DefaultHealthPruneMs,

		ContextReservePercent: DefaultContextReservePercent,
		Skill:                 DefaultSkill,
	}
}

// FieldError names the offending key of a config row or a health record, so
// the operator (or the shim setting a file aside) can say exactly what is wrong.
type FieldError struct {
	Key    string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%q: %s", e.Key, e.Reason) }

const week = 7 * 24 * 3600 * 1000

// Validate rejects contradictions. It is the one place config is checked.
func (c Config) Validate() error {
	for i, ch := range c.Chain {
		if ch.Provider == "" {
			return &FieldError{fmt.Sprintf("chain[%d].provider", i), "must be a non-empty string"}
		}
		if ch.Model == "" {
			return &FieldError{fmt.Sprintf("chain[%d].model", i), "must be a non-empty string"}
		}
		for j := 0; j < i; j++ {
			if c.Chain[j] == ch {
				return &FieldError{fmt.Sprintf("chain[%d]", i), fmt.Sprintf("duplicates chain[%d] (%s)", j, ch)}
			}
		}
	}
	for code, class := range c.Classes {
		if strings.TrimSpace(code) == "" {
			return &FieldError{"classes", "a code must be non-empty"}
		}
		if !validClass(class) {
			return &FieldError{"classes." + code, fmt.Sprintf("unknown class %q (known: %v)", class, classes)}
		}
	}
	if err := c.Stall.validate(); err != nil {
		return err
	}
	if err := c.Slow.validate(); err != nil {
		return err
	}
	if err := c.Hedge.validate(); err != nil {
		return err
	}
	if err := validatePools(c.Pools); err != nil {
		return err
	}
	if err := c.Quota.validate(); err != nil {
		return err
	}
	switch {
	case c.FailureThreshold < 1 || c.FailureThreshold > 1000:
		return &FieldError{"failureThreshold", "must be between 1 and 1000"}
	case c.BurstWindowMs < 1 || c.BurstWindowMs > week:
		return &FieldError{"burstWindowMs", "must be between 1 and one week"}
	case c.CooldownMs < 0 || c.CooldownMs > week:
		return &FieldError{"cooldownMs", "must be between 0 and one week"}
	case c.MaxCooldownMs < c.CooldownMs || c.MaxCooldownMs > week:
		return &FieldError{"maxCooldownMs", "must be at least cooldownMs and at most one week"}
	case c.ProviderThreshold < 0 || c.ProviderThreshold > 1000:
		return &FieldError{"providerThreshold", "must be between 0 (off) and 1000"}
	case c.BackoffBaseMs < 1 || c.BackoffBaseMs > math.MaxInt32:
		return &FieldError{"backoffBaseMs", "must be at least 1"}
	case c.BackoffMaxMs < c.BackoffBaseMs || c.BackoffMaxMs > 24*3600*1000:
		return &FieldError{"backoffMaxMs", "must be at least backoffBaseMs and at most one day"}
	case c.MaxFailovers < 0 || c.MaxFailovers > 1000:
		return &FieldError{"maxFailovers", "must be between 0 and 1000"}
	case c.GiveUpAfterMs < 0 || c.GiveUpAfterMs > week:
		return &FieldError{"giveUpAfterMs", "must be between 0 and one week"}
	case c.RetryBudgetPercent < 0 || c.RetryBudgetPercent > 1000:
		return &FieldError{"retryBudgetPercent", "must be between 0 and 1000"}
	case c.RetryBudgetFloor < 0 || c.RetryBudgetFloor > 1_000_000:
		return &FieldError{"retryBudgetFloor", "must be between 0 and 1000000"}
	case c.SpillAfter < 0 || c.SpillAfter > MaxSpillAfter:
		return &FieldError{"spillAfter", fmt.Sprintf("must be between 0 (off) and %d", MaxSpillAfter)}
	case c.MaxClockSkewMs < 0 || c.MaxClockSkewMs > 24*3600*1000:
		return &FieldError{"maxClockSkewMs", "must be between 0 and one day"}
	case c.Recovery != Return && c.Recovery != Stay:
		return &FieldError{"recovery", `must be "return" or "stay"`}
	case c.ProbeMaxTokens < 1 || c.ProbeMaxTokens > MaxProbeMaxTokens:
		return &FieldError{"probeMaxTokens", fmt.Sprintf("must be between 1 and %d", MaxProbeMaxTokens)}
	case c.ProviderCooldownMs < 0 || c.ProviderCooldownMs > week:
		return &FieldError{"providerCooldownMs", "must be between 0 (as long as its longest open model) and one week"}
	case c.UnknownMaxRetries < 0 || c.UnknownMaxRetries > MaxUnknownMaxRetries:
		return &FieldError{"unknownMaxRetries", fmt.Sprintf("must be between 0 and %d", MaxUnknownMaxRetries)}
	case c.HealthPruneMs < MinHealthPruneMs || c.HealthPruneMs > MaxHealthPruneMs:
		return &FieldError{"healthPruneMs", "must be an integer between 60000 (a minute) and 31536000000 (a year)"}
	case c.ContextReservePercent < 0 || c.ContextReservePercent > MaxContextReservePercent:
		return &FieldError{"contextReservePercent", fmt.Sprintf("must be between 0 and %d", MaxContextReservePercent)}
	}
	if err := validateStrip(c.StripReasoningEffort); err != nil {
		return err
	}
	if err := validateNotify(c.Notify); err != nil {
		return err
	}
	if err := c.validateTargets(); err != nil {
		return err
	}
	return c.Tools.Validate()
}

func validClass(c Class) bool {
	for _, k := range classes {
		if c == k {
			return true
		}
	}
	return false
}
