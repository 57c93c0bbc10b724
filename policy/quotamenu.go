package policy

// The quota menu: what the web chip's menu shows of one session's quota
// settings. Where the switch and the pool come from is the module's to say:
// the shim once said it itself for a session no agent ran yet, redoing from
// the saved settings how they fall over the row's defaults, and had to
// follow every change of those rules (an inherited setting, pool `off`) by
// hand, beside the module's own answer for a running session.

// QuotaMenu is the answer. Sources are those of QuotaSession.
type QuotaMenu struct {
	// Active: the row configures quota rules. Otherwise the chip shows no
	// quota items, and the rest is the zero menu.
	Active         bool
	DefaultEnabled bool
	// Pools are the pools to choose from, in the row's order.
	Pools []string
	// Enabled is the session's quota switch, Source where it comes from
	// (default, session, inherited).
	Enabled bool
	Source  SettingSource
	// Pool is the session's pool, "" for none (pools off, or no pool holds
	// its route); PoolSource where it comes from (default, session,
	// inherited, inferred, off).
	Pool       string
	PoolSource SettingSource
}

// QuotaMenu answers the session's menu at now. A session the module runs
// is told as it stands (as its quota-session effect tells it); one it has
// not met, as the agent its first request makes of its saved switch and
// pool (View's sketch): a saved pool the row no longer names is no pool,
// as that request finds it. Its route is not guessed: pool default reads
// as default until a request infers the pool. It changes nothing.
func (s *State) QuotaMenu(now int64, q ViewQuery) QuotaMenu {
	if !s.cfg.QuotaActive() {
		return QuotaMenu{Pools: []string{}, Source: SourceDefault, PoolSource: SourceDefault}
	}
	m := QuotaMenu{Active: true, DefaultEnabled: s.cfg.Quota.DefaultEnabled, Pools: make([]string, 0, len(s.cfg.Pools))}
	for _, p := range s.cfg.Pools {
		m.Pools = append(m.Pools, p.Name)
	}
	a := s.agents.lookup(q.Agent)
	if a == nil {
		sketched := s.sketch(now, q)
		a = &sketched
	}
	qs := s.sessionEffect(q.Agent, a)
	m.Enabled, m.Source, m.Pool, m.PoolSource = qs.Enabled, qs.EnabledSource, qs.Pool, qs.PoolSource
	return m
}
