package policy

import (
	"reflect"
	"testing"
)

// The quotaRetry projection (quotaprojection.go): the fold's switch over the
// row's default, a stated pool the row names, else the one pool holding the
// route; the answers the shim gave before the module did.
func TestQuotaProjection(t *testing.T) {
	pooled := func(c *Config) {
		c.Pools = []Pool{{Name: "main", Routes: []Route{{Channel: chA}, {Channel: chC}}}, {Name: "spare", Routes: []Route{{Channel: chB}}}}
	}
	both := func(c *Config) { // chA in two pools: no guess between two accounts
		pooled(c)
		c.Pools = append(c.Pools, Pool{Name: "twin", Routes: []Route{{Channel: chA}}})
	}
	offByDefault := func(c *Config) { pooled(c); c.Quota.DefaultEnabled = false }
	proj := func(enabled bool, src SettingSource, pool string, poolSrc SettingSource) QuotaProjection {
		return QuotaProjection{Enabled: enabled, DefaultEnabled: true, Source: src, Pool: pool, PoolSource: poolSrc, Pools: []string{"main", "spare"}}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		st     ProjectionState
		want   QuotaProjection
	}{
		{"nothing folded: the row's defaults", pooled, ProjectionState{}, proj(true, SourceDefault, "", SourceDefault)},
		{"a route one pool holds: that pool, as default", pooled, ProjectionState{Route: chA}, proj(true, SourceDefault, "main", SourceDefault)},
		{"a route no pool holds: none", pooled, ProjectionState{Route: chD}, proj(true, SourceDefault, "", SourceDefault)},
		{"a route two pools hold: none", both, ProjectionState{Route: chA},
			QuotaProjection{Enabled: true, DefaultEnabled: true, Source: SourceDefault, PoolSource: SourceDefault, Pools: []string{"main", "spare", "twin"}}},
		{"switch off", pooled, ProjectionState{Quota: SwitchOff}, proj(false, SourceSession, "", SourceDefault)},
		{"switch default is not set", pooled, ProjectionState{Quota: SwitchDefault}, proj(true, SourceDefault, "", SourceDefault)},
		{"switch on over a default of off", offByDefault, ProjectionState{Quota: SwitchOn},
			QuotaProjection{Enabled: true, Source: SourceSession, PoolSource: SourceDefault, Pools: []string{"main", "spare"}}},
		{"the row's default of off", offByDefault, ProjectionState{},
			QuotaProjection{Source: SourceDefault, PoolSource: SourceDefault, Pools: []string{"main", "spare"}}},
		{"a stated pool over the route's", pooled, ProjectionState{PoolMode: PoolNamed, Pool: "spare", Route: chA}, proj(true, SourceDefault, "spare", SourceSession)},
		{"a stated pool the row does not name: the route's", pooled, ProjectionState{PoolMode: PoolNamed, Pool: "gone", Route: chA}, proj(true, SourceDefault, "main", SourceDefault)},
		{"pools off: no pool, whatever the route", pooled, ProjectionState{PoolMode: PoolOff, Route: chA}, proj(true, SourceDefault, "", SourceOff)},
		{"pool default: the route's", pooled, ProjectionState{PoolMode: PoolDefault, Route: chA}, proj(true, SourceDefault, "main", SourceDefault)},
		{"no quota rules: no pools, the folded switch still said", nil, ProjectionState{Quota: SwitchOff, PoolMode: PoolNamed, Pool: "main", Route: chA},
			QuotaProjection{DefaultEnabled: true, Source: SourceSession, PoolSource: SourceDefault, Pools: []string{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.mutate)
			before := m.s.Agents()
			if got := m.s.QuotaProjection(tc.st); !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("projection %+v, want %+v", got, tc.want)
			}
			if m.s.Agents() != before {
				t.Fatal("asking for the projection changed the agents")
			}
		})
	}
}
