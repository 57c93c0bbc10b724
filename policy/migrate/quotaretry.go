package migrate

import (
	"errors"
	"fmt"
)

// dsh-llm-quota-retry: long waits through a spent allowance, route pools,
// balance scripts. Its row, even an empty one, means the quota rules are on.
var quotaRetry = plugin{
	name: "dsh-llm-quota-retry",
	ids:  []string{"llm-quota-retry", "quota-retry", "dsh-llm-quota-retry"},
	always: func() []out {
		return to(Path{"quota"}, Obj(), "its row turns the quota rules on (quota.active)")
	},
	keys: map[string]keyMap{
		"pools": func(v, _ Value) ([]out, error) {
			p, err := pools(v)
			// The pool setting `off` keeps the quota plugin's meaning, chain or not
			// ("This session never changes provider. An exhausted allowance is
			// waited out where it is"): policy quota.go, pinned.
			return to(Path{"pools"}, p, "a list of {name, routes}; the same names, routes and order; "+
				"a session's pool off keeps its meaning: it never changes provider for a spent allowance, even with a chain"), err
		},
		"balances": func(v, _ Value) ([]out, error) {
			b, warnings, err := balances(v)
			outs := to(Path{"quota", "balances"}, b, "one script per provider, argv, the same reading {remaining, resetsAt?}")
			for _, w := range warnings {
				outs = append(outs, out{note: w})
			}
			return outs, err
		},
		"longTermDelayMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"quota", "longTermDelayMs"}, n, "delay between attempts of a long-term wait"), err
		},
		"defaultEnabled": func(v, _ Value) ([]out, error) {
			b, err := boolean(v)
			return to(Path{"quota", "defaultEnabled"}, b, "the per-session switch until a session sets it"), err
		},
		"failOpen": func(v, _ Value) ([]out, error) {
			b, err := boolean(v)
			return to(Path{"quota", "failOpen"}, b, "a route nothing reported on is usable"), err
		},
		"exhaustedCooldownMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"quota", "exhaustedCooldownMs"}, n, "an exhaustion mark's lifetime"), err
		},
	},
}

// pools: the quota plugin's map of pool name to routes (or to {routes})
// becomes our named list; a list is already ours.
func pools(v Value) (Value, error) {
	if v.Kind == Array {
		return v, nil
	}
	if !v.isMap() {
		return v, errors.New("must be a map of pool name to routes")
	}
	list := make([]Value, 0, len(v.Obj))
	for _, m := range v.Obj {
		routes := m.Val
		if r, ok := m.Val.Get("routes"); ok && r.Kind == Array {
			routes = r
		}
		if routes.Kind != Array {
			return v, fmt.Errorf("%s: must be a list of routes", m.Key)
		}
		chs, err := channels(routes, "reasoningEffort")
		if err != nil {
			return v, fmt.Errorf("%s%s", m.Key, err.Error())
		}
		list = append(list, Obj(M("name", Str(m.Key)), M("routes", chs)))
	}
	return List(list...), nil
}
