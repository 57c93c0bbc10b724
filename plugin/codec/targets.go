package codec

import (
	"math"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// Per-target settings on the wire: a chain entry or pool route may carry its
// own failureThreshold, cooldownMs and slowFirstTokenMs (WIT `target`,
// `route`). A channel has one breaker, so entries naming the same channel
// must agree.

var targetKeys = []string{"provider", "model", "failureThreshold", "cooldownMs", "slowFirstTokenMs"}

// targets collects what the row's entries set, by channel, with the key
// that first set it.
type targets struct {
	set map[policy.Channel]policy.TargetSettings
	key map[policy.Channel]string
}

// settings reads an entry's own settings; 0 is refused (absent means the row's).
func (d *decoder) settings(v gjson.Result, path string) policy.TargetSettings {
	var t policy.TargetSettings
	one := func(k string, max uint64) int64 {
		n, ok := d.uint(v.Get(k), path+"."+k, false, max)
		if ok && n == 0 {
			d.fail(path+"."+k, "must be at least 1 (leave it out for the row's)")
		}
		return int64(n)
	}
	t.FailureThreshold = int(one("failureThreshold", math.MaxInt32))
	t.CooldownMs = one("cooldownMs", maxMs)
	t.SlowFirstTokenMs = one("slowFirstTokenMs", maxMs)
	return t
}

// note records ch's settings from the entry at path, refusing a second
// entry that names the same channel with other settings.
func (d *decoder) note(ts *targets, ch policy.Channel, t policy.TargetSettings, path string) {
	if d.err != nil {
		return
	}
	prev, had := ts.set[ch]
	switch {
	case had && !t.IsZero() && prev != t:
		d.fail(path, "sets other settings than %s for %s: a channel has one breaker", ts.key[ch], ch)
	case t.IsZero() || had:
	default:
		if ts.set == nil {
			ts.set, ts.key = map[policy.Channel]policy.TargetSettings{}, map[policy.Channel]string{}
		}
		ts.set[ch], ts.key[ch] = t, path
	}
}

// chainTarget reads a chain entry: a channel with optional settings.
func (d *decoder) chainTarget(v gjson.Result, path string, ts *targets) policy.Channel {
	if !d.object(v, path, targetKeys...) {
		return policy.Channel{}
	}
	ch := policy.Channel{Provider: d.str(v.Get("provider"), path+".provider", true), Model: d.str(v.Get("model"), path+".model", true)}
	d.note(ts, ch, d.settings(v, path), path)
	return ch
}

// writeSettings writes a target's own settings beside its channel.
func writeSettings(w *writer, t policy.TargetSettings) {
	if t.FailureThreshold > 0 {
		w.int("failureThreshold", int64(t.FailureThreshold))
	}
	if t.CooldownMs > 0 {
		w.int("cooldownMs", t.CooldownMs)
	}
	if t.SlowFirstTokenMs > 0 {
		w.int("slowFirstTokenMs", t.SlowFirstTokenMs)
	}
}

func writeTarget(w *writer, ch policy.Channel, t policy.TargetSettings) {
	w.beginObject("")
	w.str("provider", ch.Provider)
	w.str("model", ch.Model)
	writeSettings(w, t)
	w.endObject()
}
