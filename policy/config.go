package policy

import (
	"fmt"
	"math"
)

// Defaults. Each is what a long agent task wants when the operator says nothing.
const (
	// DefaultFailureThreshold is how many consecutive failures the plugin itself
	// sees on a channel (beyond the host's own retries) before opening it. Three
	// rides out a blip without hammering a channel that is really down.
	DefaultFailureThreshold = 3
	// DefaultCooldownMs keeps an opened channel out of rotation for a minute:
	// long enough for a rate window to pass, short enough to return promptly.
	// A provider's Retry-After extends it.
	DefaultCooldownMs = 60_000
	// DefaultBackoffBaseMs is the first same-channel wait (before jitter).
	DefaultBackoffBaseMs = 1_000
	// DefaultBackoffMaxMs caps the exponential part; a provider's Retry-After may
	// still ask for more, and is honoured.
	DefaultBackoffMaxMs = 30_000
	// DefaultMaxFailovers stops an agent from bouncing between sick channels
	// forever: after this many failovers without a success, give the failure back.
	DefaultMaxFailovers = 4
)

// Config is the plugin's configuration, flat and immutable once validated.
type Config struct {
	// Chain is the failover order; Chain[0] is the primary.
	Chain            []Channel
	FailureThreshold int
	CooldownMs       int64
	BackoffBaseMs    int64
	BackoffMaxMs     int64
	MaxFailovers     int
}

// DefaultConfig returns a config with every default and an empty chain.
func DefaultConfig() Config {
	return Config{
		FailureThreshold: DefaultFailureThreshold,
		CooldownMs:       DefaultCooldownMs,
		BackoffBaseMs:    DefaultBackoffBaseMs,
		BackoffMaxMs:     DefaultBackoffMaxMs,
		MaxFailovers:     DefaultMaxFailovers,
	}
}

// FieldError names the offending key of a config row or a health record, so
// the operator (or the shim setting a file aside) can say exactly what is wrong.
type FieldError struct {
	Key    string
	Reason string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%q: %s", e.Key, e.Reason) }

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
	switch {
	case c.FailureThreshold < 1 || c.FailureThreshold > 1000:
		return &FieldError{"failureThreshold", "must be between 1 and 1000"}
	case c.CooldownMs < 0 || c.CooldownMs > 7*24*3600*1000:
		return &FieldError{"cooldownMs", "must be between 0 and one week"}
	case c.BackoffBaseMs < 1 || c.BackoffBaseMs > math.MaxInt32:
		return &FieldError{"backoffBaseMs", "must be at least 1"}
	case c.BackoffMaxMs < c.BackoffBaseMs || c.BackoffMaxMs > 24*3600*1000:
		return &FieldError{"backoffMaxMs", "must be at least backoffBaseMs and at most one day"}
	case c.MaxFailovers < 0 || c.MaxFailovers > 1000:
		return &FieldError{"maxFailovers", "must be between 0 and 1000"}
	}
	return nil
}
