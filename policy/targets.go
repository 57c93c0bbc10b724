package policy

import "fmt"

// Per-target settings. A cheap fast model and a flagship behind a gateway do
// not fail the same way: a chain entry or pool route may set its own
// failureThreshold, cooldownMs and slow threshold, defaulting to the row's.
// A channel has one breaker however many entries name it, so two entries
// naming it must not disagree.

// MaxContextReservePercent bounds the reserve: a target usable for less than
// a tenth of its window would be skipped by nearly every request.
const MaxContextReservePercent = 90

// TargetSettings are one target's own settings; 0 is "the row's".
type TargetSettings struct {
	FailureThreshold int
	CooldownMs       int64
	// SlowFirstTokenMs is the target's own slow-call threshold (the slow breaker's).
	SlowFirstTokenMs int64
}

// IsZero reports whether the target sets nothing of its own.
func (t TargetSettings) IsZero() bool { return t == TargetSettings{} }

// validate checks one target's settings, key naming it (`chain[1]`).
func (t TargetSettings) validate(key string, c *Config) error {
	switch {
	case t.FailureThreshold < 0 || t.FailureThreshold > 1000:
		return &FieldError{key + ".failureThreshold", "must be between 1 and 1000 (absent: the row's)"}
	case t.CooldownMs < 0 || t.CooldownMs > c.MaxCooldownMs:
		return &FieldError{key + ".cooldownMs", "must be between 1 and maxCooldownMs (absent: the row's)"}
	case t.SlowFirstTokenMs < 0 || t.SlowFirstTokenMs > week:
		return &FieldError{key + ".slowFirstTokenMs", "must be between 1 and one week (absent: the row's)"}
	}
	return nil
}

// validateTargets checks each target's settings (the codec has refused a
// 0, which would read as "the row's"), and that they name chain or pool routes.
func (c *Config) validateTargets() error {
	for ch, t := range c.Targets {
		key := ch.String()
		if keys := c.targetConfigKeys(ch); len(keys) > 0 {
			key = keys[0]
		} else {
			return &FieldError{"targets", fmt.Sprintf("%s is neither a chain entry nor a pool route", ch)}
		}
		if err := t.validate(key, c); err != nil {
			return err
		}
	}
	return nil
}

// targetConfigKeys names the chain entries and pool routes that are ch.
func (c *Config) targetConfigKeys(ch Channel) []string {
	var keys []string
	for i, x := range c.Chain {
		if x == ch {
			keys = append(keys, fmt.Sprintf("chain[%d]", i))
		}
	}
	return append(keys, c.poolKeys(ch)...)
}

// threshold is the failures within a burst that open ch.
func (c *Config) threshold(ch Channel) int {
	if t := c.Targets[ch].FailureThreshold; t > 0 {
		return t
	}
	return c.FailureThreshold
}

// cooldown is ch's first open time.
func (c *Config) cooldown(ch Channel) int64 {
	if t := c.Targets[ch].CooldownMs; t > 0 {
		return t
	}
	return c.CooldownMs
}

// SlowFirstTokenMs is ch's own slow-call threshold, 0 when it sets none.
func (c *Config) SlowFirstTokenMs(ch Channel) int64 { return c.Targets[ch].SlowFirstTokenMs }
