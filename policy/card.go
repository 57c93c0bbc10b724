package policy

import (
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy/migrate"
)

// The web settings card tunes a few keys of the row live. Row and section
// are free-form JSON, not a Config: a key the module does not take must
// reach its check as the user wrote it, so that the check names it. So the
// card works on JSON values (migrate.Value, in the order the shim wrote
// them), the way the shim's JS did before: the same merged text gets the
// same word from the check.

// CardKeys are the keys the settings card tunes; the rest of the row stays
// as configured. Each replaces the row's key whole, except quota: the card
// holds only quota.defaultEnabled, merged into the row's own quota object.
var CardKeys = []string{"failureThreshold", "cooldownMs", "backoffMaxMs", "recovery", "persistent", "retryUnknown", "unknownMaxRetries", "chain", "quota"}

// CardMerge is the row with the section's tunable keys.
func CardMerge(row, section migrate.Value) migrate.Value {
	out := migrate.Obj(members(row)...)
	for _, k := range CardKeys {
		if v, ok := section.Get(k); ok && k != "quota" {
			out.Set(k, v)
		}
	}
	// The card orders channels; a row entry's own settings (failureThreshold, ...) stay with its channel.
	if chain, ok := section.Get("chain"); ok && chain.Kind == migrate.Array {
		own, _ := row.Get("chain")
		list := migrate.List()
		for _, c := range chain.Arr {
			entry := migrate.Obj(members(findChannel(own, c))...)
			for _, m := range members(c) {
				entry.Set(m.Key, m.Val)
			}
			list.Arr = append(list.Arr, entry)
		}
		out.Set("chain", list)
	}
	// The card's "Retry on quota" is quota.defaultEnabled alone: merged into
	// the row's quota object, so its balances and delays stay the row's. A row
	// with no quota object gets {defaultEnabled}, which turns the quota rules
	// on (any quota object does): a spent allowance with nowhere else to go is
	// then waited out on its route. A section quota that is no object goes to
	// the check whole, which names it.
	if quota, ok := section.Get("quota"); ok {
		if on, set := quota.Get("defaultEnabled"); set {
			rowQuota, _ := row.Get("quota")
			merged := migrate.Obj()
			if rowQuota.Kind == migrate.Object {
				merged = migrate.Obj(members(rowQuota)...)
			}
			merged.Set("defaultEnabled", on)
			out.Set("quota", merged)
		} else if quota.Kind != migrate.Object {
			out.Set("quota", quota)
		}
	}
	return out
}

// CardRefusal is what the card alone refuses, before the module's check of
// the merged row: a section quota with keys beside defaultEnabled, which
// would shadow the row's own (its balances, its delays) with values no card
// field shows. Empty: none.
func CardRefusal(section migrate.Value) string {
	quota, _ := section.Get("quota")
	if quota.Kind != migrate.Object {
		return ""
	}
	for _, m := range quota.Obj {
		if m.Key != "defaultEnabled" {
			key := []rune(m.Key)
			return `config key "quota.` + string(key[:min(len(key), 64)]) + `": the settings card sets only quota.defaultEnabled; the rest of quota is the row's`
		}
	}
	return ""
}

// CardChanged is the tunable keys in which the section differs from cfg,
// the config the module runs, in CardKeys' order: what a live apply would
// change. A section that says the same (the schema's defaults, the row's
// own values) changes nothing, so it is not applied again. The card leaves
// backoffMaxMs unset (its default depends on persistent): unset, it reads
// as the row's wait, else the default for the section's mode.
func CardChanged(row, section migrate.Value, cfg Config) []string {
	want := cardView(section)
	if _, ok := want["backoffMaxMs"]; !ok {
		wait, set := row.Get("backoffMaxMs")
		if !set || wait.Kind == migrate.Null {
			wait = migrate.Num(DefaultBackoffMaxMs)
			if p := want["persistent"]; p.Kind == migrate.Bool && p.Bool {
				wait = migrate.Num(PersistentBackoffMaxMs)
			}
		}
		want["backoffMaxMs"] = wait
	}
	now := runningView(cfg)
	changed := []string{}
	for _, k := range CardKeys {
		if text(want, k) != text(now, k) {
			changed = append(changed, k)
		}
	}
	return changed
}

// cardView is a section's tunable keys as the card compares them: chain
// entries cut to {provider, model}, quota as its one key (defaultEnabled,
// while the section does not turn the rules off). A key left out is absent.
func cardView(section migrate.Value) map[string]migrate.Value {
	view := map[string]migrate.Value{}
	for _, k := range CardKeys {
		if v, ok := section.Get(k); ok {
			view[k] = v
		}
	}
	delete(view, "quota")
	if q, _ := section.Get("quota"); q.Kind == migrate.Object {
		if active, _ := q.Get("active"); !(active.Kind == migrate.Bool && !active.Bool) {
			if on, ok := q.Get("defaultEnabled"); ok {
				view["quota"] = on
			}
		}
	}
	chain := migrate.List()
	if c := view["chain"]; c.Kind == migrate.Array {
		for _, e := range c.Arr {
			cut := migrate.Obj()
			for _, k := range []string{"provider", "model"} {
				if v, ok := e.Get(k); ok {
					cut.Set(k, v)
				}
			}
			chain.Arr = append(chain.Arr, cut)
		}
	} else if c.Kind != migrate.Null {
		chain = c // no list: never what runs, so the apply goes to the check, which names it
	}
	view["chain"] = chain
	return view
}

// runningView is cfg's tunable keys as cardView has a section's: quota's
// switch only while the rules apply (a row without them has none to show).
func runningView(cfg Config) map[string]migrate.Value {
	chain := migrate.List()
	for _, ch := range cfg.Chain {
		chain.Arr = append(chain.Arr, migrate.Obj(migrate.M("provider", migrate.Str(ch.Provider)), migrate.M("model", migrate.Str(ch.Model))))
	}
	view := map[string]migrate.Value{
		"failureThreshold":  migrate.Num(float64(cfg.FailureThreshold)),
		"cooldownMs":        migrate.Num(float64(cfg.CooldownMs)),
		"backoffMaxMs":      migrate.Num(float64(cfg.BackoffMaxMs)),
		"recovery":          migrate.Str(string(cfg.Recovery)),
		"persistent":        migrate.Boolean(cfg.Persistent),
		"retryUnknown":      migrate.Boolean(cfg.RetryUnknown),
		"unknownMaxRetries": migrate.Num(float64(cfg.UnknownMaxRetries)),
		"chain":             chain,
	}
	if cfg.QuotaActive() {
		view["quota"] = migrate.Boolean(cfg.Quota.DefaultEnabled)
	}
	return view
}

// text is a view's key as JSON text; "" when absent (which no JSON is).
func text(view map[string]migrate.Value, k string) string {
	if v, ok := view[k]; ok {
		return v.JSON()
	}
	return ""
}

// findChannel is the row's own chain entry for the section's entry c: the
// first whose provider and model are c's (both absent counts as the same,
// as the shim compared them). Null when none.
func findChannel(own, c migrate.Value) migrate.Value {
	for _, r := range own.Arr {
		if sameMember(r, c, "provider") && sameMember(r, c, "model") {
			return r
		}
	}
	return migrate.Value{}
}

// sameMember reports whether a and b hold the same scalar under key (or
// both none): an object or a list is never the same as another.
func sameMember(a, b migrate.Value, key string) bool {
	x, xok := a.Get(key)
	y, yok := b.Get(key)
	if !xok || !yok {
		return xok == yok
	}
	if x.Kind == migrate.Array || x.Kind == migrate.Object || x.Kind != y.Kind {
		return false
	}
	return x.Bool == y.Bool && x.Num == y.Num && x.Str == y.Str
}

// members is what spreading v into an object gives ({...v} in the shim's
// JS): an object's members; a list's or a string's items under their index;
// nothing of any other value.
func members(v migrate.Value) []migrate.Member {
	var out []migrate.Member
	switch v.Kind {
	case migrate.Object:
		out = append(out, v.Obj...)
	case migrate.Array:
		for i, e := range v.Arr {
			out = append(out, migrate.M(strconv.Itoa(i), e))
		}
	case migrate.String:
		for i, r := range []rune(v.Str) {
			out = append(out, migrate.M(strconv.Itoa(i), migrate.Str(string(r))))
		}
	}
	return out
}
