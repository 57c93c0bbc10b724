package policy

// The quotaRetry session projection: the client's view of a session's quota
// settings, from what the host folded out of the session's log without the
// module (its quota commands, the route of its last request). The fold is
// the shim's, since the host runs it over every event and before the module
// is up; what the folded choices amount to under the running config is the
// module's to say. The shim once said it itself, redoing how a switch falls
// over the row's default and which pool holds a route beside the module's
// own rules for the same session (sessionEffect, InferPool).

// ProjectionState is the fold's state, as the host holds it.
type ProjectionState struct {
	// Quota is the session's switch; "" (or default): not set.
	Quota SwitchMode
	// PoolMode and Pool are the pool the session stated, if any ("" or
	// default: none stated).
	PoolMode PoolMode
	Pool     string
	// Route is the route of its last request; zero: none yet.
	Route Channel
}

// QuotaProjection is the answer, in the quota plugin's documented format.
type QuotaProjection struct {
	Enabled, DefaultEnabled bool
	// Source is session or default: the fold cannot tell an inherited
	// setting (a fork's boundary is no event it sees), so it never says so.
	Source SettingSource
	// Pool governs the session, "" for none; PoolSource is session, off, or
	// default (no pool stated: the one pool holding its route, or none).
	Pool       string
	PoolSource SettingSource
	// Pools are every configured pool's name, in the row's order.
	Pools []string
}

// QuotaProjection answers the projection of st under the running config.
// The session is read as the agent its folded settings make, through the
// rules that report a running session (sessionEffect), so the two cannot
// disagree. A stated pool the config does not name is no pool, as SetPool
// refuses it (it may have been picked before the module was up); the pool
// the route infers is `default` in the quota plugin's format, which has no
// `inferred`. Unlike the menu, a row without quota rules still answers the
// folded switch: the projection is the client's, whatever the row. It
// changes nothing.
func (s *State) QuotaProjection(st ProjectionState) QuotaProjection {
	var a agent
	if st.Quota == SwitchOn || st.Quota == SwitchOff {
		a.q.switchMode = st.Quota
	}
	switch {
	case st.PoolMode == PoolOff:
		a.q.poolMode = PoolOff
	case st.PoolMode == PoolNamed && s.cfg.pool(st.Pool) != nil:
		a.q.poolMode, a.q.poolName = PoolNamed, st.Pool
	}
	a.routed = st.Route
	qs := s.sessionEffect("", &a)
	p := QuotaProjection{Enabled: qs.Enabled, DefaultEnabled: s.cfg.Quota.DefaultEnabled, Source: qs.EnabledSource,
		Pool: qs.Pool, PoolSource: qs.PoolSource, Pools: make([]string, 0, len(s.cfg.Pools))}
	if p.PoolSource == SourceInferred {
		p.PoolSource = SourceDefault
	}
	for _, pool := range s.cfg.Pools {
		p.Pools = append(p.Pools, pool.Name)
	}
	return p
}
