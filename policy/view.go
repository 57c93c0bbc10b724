package policy

// The session view: what the web chip says of one session, in the module's
// own words. Where the session runs and where a failure would send it next
// are decisions (the home, the user's pick, the backup, a pool's routes,
// context fit, slow channels, channels the host cannot serve): a client
// that derived them again from the chain and the breakers got them wrong,
// most visibly after a restart, when it named the channel the session was
// already on as its next target. The view asks the same preferences and
// the same walk a failover does, and changes nothing.

// ViewQuery names the session and what the shell knows of it that the
// module may not: after a restart the module has not met the session yet.
type ViewQuery struct {
	Agent string
	// Proposed is the host's selection for the session: the route its last
	// request went out on (what the host proposes next).
	Proposed Channel
	// Home and Pick are what the shell holds for the session (the module
	// reported them: SessionRoute, FailedOver), handed back at its first
	// request after a restart (RestoreRoute).
	Home, Pick Channel
	// Quota, PoolMode and Pool are the session's saved quota switch and pool
	// choice, told at its first request after a restart (SetQuota, SetPool);
	// empty: none saved.
	Quota    SwitchMode
	PoolMode PoolMode
	Pool     string
	// QuotaInherited and PoolInherited: the saved switch and pool are the
	// session's ancestor's, taken as a snapshot (SetQuota.Inherited,
	// SetPool.Inherited), as the shell tells them at that first request.
	QuotaInherited, PoolInherited bool
}

// Via says why the next target is the one named.
type Via string

const (
	ViaHome   Via = "home"   // the session goes back where it belongs (or to the user's pick)
	ViaBackup Via = "backup" // the user's chosen backup
	ViaPool   Via = "pool"   // a route of the session's quota pool
	ViaChain  Via = "chain"  // the chain
)

// SessionView is the answer. Zero channels are "none".
type SessionView struct {
	// Current is where the session runs: its last routed request, else the
	// host's selection, else the chain's primary.
	Current Channel
	// Home is where the session belongs, when it is away from it.
	Home Channel
	// Next is where a failure of Current would send the session now, and Via why.
	Next Channel
	Via  Via
	// Avoided: Current, or the home it is away from, takes no request now.
	Avoided bool
	// GaveUp is the session's last give-up, until its next request; nil:
	// none (or a session this module has not met).
	GaveUp *GaveUp
}

// View answers the session view at now, as the session's next request
// would find it. It changes nothing: the session is looked at through a
// copy, an unknown one as the agent it would become at its first request,
// and the copy's pool route is settled as that request would settle it (a
// session whose route's pool had changed named no next target until its
// next request, and a restarted module named another).
func (s *State) View(now int64, q ViewQuery) SessionView {
	proposed := q.Proposed
	if proposed.IsZero() && len(s.cfg.Chain) > 0 {
		proposed = s.cfg.Chain[0]
	}
	var a agent
	if known := s.agents.lookup(q.Agent); known != nil {
		a = *known
		a.prev, a.next, a.list = nil, nil, nil
	} else {
		a = s.sketch(now, q)
	}
	v := SessionView{Current: a.routed, GaveUp: a.gaveUp}
	if v.Current.IsZero() {
		v.Current = proposed
	}
	if v.Current.IsZero() {
		return v
	}
	skipped := len(s.skipped)
	var fx []Effect
	s.quotaBeforeRequest(now, &a, q.Agent, v.Current, &fx)
	s.skipped = s.skipped[:skipped] // the step's scratch: a refit notes what it skipped
	if !a.home.IsZero() && a.home != v.Current {
		v.Home = a.home
	}
	v.Avoided = !s.routable(now, v.Current) || !v.Home.IsZero() && !s.routable(now, v.Home)
	ps := s.preferences(&a, v.Current)
	next, ok := s.firstRoutable(now, ps, v.Current)
	if !ok {
		return v
	}
	v.Next = next
	switch {
	case next == ps.first:
		v.Via = ViaHome
	case next == ps.backup:
		v.Via = ViaBackup
	case ps.pool != nil:
		v.Via = ViaPool
	default:
		v.Via = ViaChain
	}
	return v
}

// sketch is the agent an unknown session becomes at its first request: its
// saved settings told as the shell tells them (quota switch, pool, then
// home and pick). Without them a restarted module named the chain's next
// channel for a session in a pool it chose, until its first request.
func (s *State) sketch(now int64, q ViewQuery) agent {
	var a agent
	if s.cfg.QuotaActive() {
		if q.Quota == SwitchOn || q.Quota == SwitchOff {
			a.q.switchMode, a.q.switchInherited = q.Quota, q.QuotaInherited
		}
		switch q.PoolMode {
		case PoolNamed:
			if p := s.cfg.pool(q.Pool); p != nil {
				a.q.poolMode, a.q.poolName, a.q.pool = PoolNamed, p.Name, p.Name
				a.q.route, _ = s.chooseRoute(now, p, Channel{}, a.need)
				a.q.poolInherited = q.PoolInherited
			}
		case PoolOff:
			a.q.poolMode, a.q.poolInherited = PoolOff, q.PoolInherited
		}
	}
	a.home, a.pick, a.restored = q.Home, q.Pick, !q.Home.IsZero()
	return a
}
