package policy

import (
	"fmt"
	"slices"
)

// Pools. A pool is a named failover order of interchangeable routes. The
// row's chain stays the order every session uses by default; a session put
// into a pool (or whose route exactly one pool holds) uses that pool's routes
// instead, so one host can serve sessions on different plans without them
// spilling onto each other's accounts.

// Route is one entry of a pool: a channel and, optionally, the reasoning
// effort a session moved there should use (a cheaper plan's model may want
// another effort). The engine's keep/drop rule still guards it.
type Route struct {
	Channel         Channel
	ReasoningEffort string
}

// Pool is a named, ordered list of routes; the order breaks ties in route choice.
type Pool struct {
	Name   string
	Routes []Route
}

// reservedPoolNames are words the per-session commands take as arguments
// (`/resilience pool off`), or that an older quota plugin gave a meaning;
// a pool so named could never be chosen, so activation refuses it.
var reservedPoolNames = []string{"status", "off", "none", "disable", "disabled", "default", "reset", "auto", "error"}

// ReservedPoolNames is a copy of the names no pool may take: a caller that
// changes it cannot change what ValidPoolName refuses.
func ReservedPoolNames() []string { return slices.Clone(reservedPoolNames) }

// maxPoolName keeps names readable in a command and a table.
const maxPoolName = 64

// ValidPoolName reports whether name is a usable pool name: lowercase
// letters, digits and hyphens, not reserved. The reason is empty when it is.
func ValidPoolName(name string) (ok bool, reason string) {
	if name == "" || len(name) > maxPoolName {
		return false, fmt.Sprintf("must be 1 to %d characters", maxPoolName)
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false, fmt.Sprintf("%q: only lowercase letters, digits and hyphens", name)
		}
	}
	for _, w := range reservedPoolNames {
		if name == w {
			return false, fmt.Sprintf("%q is reserved (reserved: %v): the pool commands take it as a word", name, reservedPoolNames)
		}
	}
	return true, ""
}

func validatePools(pools []Pool) error {
	for i, p := range pools {
		key := fmt.Sprintf("pools[%d]", i)
		if ok, why := ValidPoolName(p.Name); !ok {
			return &FieldError{key + ".name", why}
		}
		for j := 0; j < i; j++ {
			if pools[j].Name == p.Name {
				return &FieldError{key + ".name", fmt.Sprintf("duplicates pools[%d] (%q)", j, p.Name)}
			}
		}
		if len(p.Routes) == 0 {
			return &FieldError{key + ".routes", "must list at least one route"}
		}
		for j, r := range p.Routes {
			rk := fmt.Sprintf("%s.routes[%d]", key, j)
			if r.Channel.Provider == "" {
				return &FieldError{rk + ".provider", "must be a non-empty string"}
			}
			if r.Channel.Model == "" {
				return &FieldError{rk + ".model", "must be a non-empty string"}
			}
			for k := 0; k < j; k++ {
				if p.Routes[k].Channel == r.Channel {
					return &FieldError{rk, fmt.Sprintf("duplicates %s.routes[%d] (%s)", key, k, r.Channel)}
				}
			}
		}
	}
	return nil
}

// pool returns the named pool, or nil.
func (c *Config) pool(name string) *Pool {
	for i := range c.Pools {
		if c.Pools[i].Name == name {
			return &c.Pools[i]
		}
	}
	return nil
}

// InferPool is the pool a session on ch belongs to by default: the one pool
// that holds ch. None, or more than one, infers nothing: a guess between two
// accounts would be worse than the chain.
func (c *Config) InferPool(ch Channel) *Pool {
	var found *Pool
	for i := range c.Pools {
		if c.Pools[i].holds(ch) {
			if found != nil {
				return nil
			}
			found = &c.Pools[i]
		}
	}
	return found
}

// poolKeys names the pool routes that are ch, for the operator.
func (c *Config) poolKeys(ch Channel) []string {
	var keys []string
	for i, p := range c.Pools {
		for j, r := range p.Routes {
			if r.Channel == ch {
				keys = append(keys, fmt.Sprintf("pools[%d].routes[%d]", i, j))
			}
		}
	}
	return keys
}

func (p *Pool) holds(ch Channel) bool {
	_, ok := p.route(ch)
	return ok
}

func (p *Pool) route(ch Channel) (Route, bool) {
	for _, r := range p.Routes {
		if r.Channel == ch {
			return r, true
		}
	}
	return Route{}, false
}
