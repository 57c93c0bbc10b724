package policy

import (
	"reflect"
	"testing"
)

// The web chip's quota menu (quotamenu.go): a live session as the module
// holds it, a session not met yet as its saved settings over the row's
// defaults (inherited ones said so), nothing when the row has no quota rules.
func TestQuotaMenu(t *testing.T) {
	pooled := func(c *Config) {
		c.Probes = false
		c.Pools = []Pool{{Name: "main", Routes: []Route{{Channel: chA}, {Channel: chC}}}, {Name: "spare", Routes: []Route{{Channel: chB}}}}
		c.Quota.DefaultEnabled = true
	}
	menu := func(enabled bool, src SettingSource, pool string, poolSrc SettingSource) QuotaMenu {
		return QuotaMenu{Active: true, DefaultEnabled: true, Pools: []string{"main", "spare"}, Enabled: enabled, Source: src, Pool: pool, PoolSource: poolSrc}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		setup  func(m *sim)
		q      ViewQuery
		want   QuotaMenu
	}{
		{"no quota rules: no menu", nil, nil, ViewQuery{Agent: "s1", Quota: SwitchOff},
			QuotaMenu{Pools: []string{}, Source: SourceDefault, PoolSource: SourceDefault}},
		{"not met, nothing saved: the row's defaults", pooled, nil, ViewQuery{Agent: "s1"},
			menu(true, SourceDefault, "", SourceDefault)},
		{"not met, the route the host proposes: no pool guessed before a request", pooled, nil, ViewQuery{Agent: "s1", Proposed: chA},
			menu(true, SourceDefault, "", SourceDefault)},
		{"not met, saved switch off and pool spare", pooled, nil, ViewQuery{Agent: "s1", Quota: SwitchOff, PoolMode: PoolNamed, Pool: "spare"},
			menu(false, SourceSession, "spare", SourceSession)},
		{"not met, both inherited from its parent", pooled, nil,
			ViewQuery{Agent: "s1", Quota: SwitchOff, QuotaInherited: true, PoolMode: PoolNamed, Pool: "spare", PoolInherited: true},
			menu(false, SourceInherited, "spare", SourceInherited)},
		{"not met, switch inherited, pool its own", pooled, nil,
			ViewQuery{Agent: "s1", Quota: SwitchOn, QuotaInherited: true, PoolMode: PoolNamed, Pool: "main"},
			menu(true, SourceInherited, "main", SourceSession)},
		{"not met, an inherited flag with nothing saved: the default", pooled, nil,
			ViewQuery{Agent: "s1", QuotaInherited: true, PoolInherited: true},
			menu(true, SourceDefault, "", SourceDefault)},
		{"not met, saved pool off: never changes provider, inherited or not", pooled, nil, ViewQuery{Agent: "s1", PoolMode: PoolOff, PoolInherited: true},
			menu(true, SourceDefault, "", SourceOff)},
		{"not met, a saved pool the row no longer has: the default, as its first request takes it", pooled, nil,
			ViewQuery{Agent: "s1", PoolMode: PoolNamed, Pool: "gone", PoolInherited: true},
			menu(true, SourceDefault, "", SourceDefault)},
		{"live: its own settings, whatever is saved", pooled, func(m *sim) {
			m.step(SetQuota{Agent: "s1", Mode: SwitchOff})
			m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "main"})
		}, ViewQuery{Agent: "s1", Quota: SwitchOn, QuotaInherited: true, PoolMode: PoolOff},
			menu(false, SourceSession, "main", SourceSession)},
		{"live, told its parent's settings", pooled, func(m *sim) {
			m.step(SetQuota{Agent: "s1", Mode: SwitchOff, Inherited: true})
			m.step(SetPool{Agent: "s1", Mode: PoolNamed, Pool: "spare", Inherited: true})
		}, ViewQuery{Agent: "s1"},
			menu(false, SourceInherited, "spare", SourceInherited)},
		{"live on a pooled route: its pool inferred", pooled, func(m *sim) { m.request("s1", chA) }, ViewQuery{Agent: "s1"},
			menu(true, SourceDefault, "main", SourceInferred)},
		{"live, set back to default: the row's default, not its parent's", pooled, func(m *sim) {
			m.step(SetQuota{Agent: "s1", Mode: SwitchOff, Inherited: true})
			m.step(SetQuota{Agent: "s1", Mode: SwitchDefault})
		}, ViewQuery{Agent: "s1", Quota: SwitchOff, QuotaInherited: true},
			menu(true, SourceDefault, "", SourceDefault)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newSim(t, tc.mutate)
			if tc.setup != nil {
				tc.setup(m)
			}
			before := m.s.Agents()
			got := m.s.QuotaMenu(m.now, tc.q)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("menu %+v, want %+v", got, tc.want)
			}
			if m.s.Agents() != before {
				t.Fatal("asking for the menu changed the agents")
			}
		})
	}
}
