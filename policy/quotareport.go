package policy

// The quota rules' state as one read-only report: what `/resilience routes`
// prints, what the llmQuotaRetry service answers and the session projection
// shows. Reading it changes nothing.

// QuotaReport is the report at one time.
type QuotaReport struct {
	Active         bool
	DefaultEnabled bool
	Pools          []PoolReport
	Providers      []ProviderReport
	// Session is the asked-for agent's state; nil when none was asked for.
	Session *SessionReport
}

// PoolReport is one pool: the route a new session would get, and each route's standing.
type PoolReport struct {
	Name   string
	Choice Route
	Usable bool // Choice is usable (else every route is not, and Choice is the first)
	Routes []RouteReport
}

// RouteReport is one route's standing in route choice.
type RouteReport struct {
	Route  Route
	Usable bool
	Why    RouteWhy // UsableReading, UnusableMarked, ...
}

// ProviderReport is one provider's mark and reading.
type ProviderReport struct {
	Provider string
	// MarkedUntilMs is when its exhaustion mark lapses; 0 when it has none.
	MarkedAtMs, MarkedUntilMs int64
	// HasBalance: a script reports on it.
	HasBalance       bool
	Unit             string
	MinimumRemaining float64
	RefreshMs        int64
	// Reading is its latest script result; nil before the first.
	Reading *ReadingReport
	// Stale: the reading is missing or older than the refresh interval.
	Stale bool
	// Refreshing: a run is in flight.
	Refreshing bool
}

// ReadingReport is one script result.
type ReadingReport struct {
	AtMs       int64
	OK         bool
	Remaining  float64
	ResetsAtMs int64
}

// SessionReport is one agent's quota settings and long-term wait.
type SessionReport struct {
	QuotaSession
	Wait *QuotaWait // nil when not waiting
}

// QuotaReport reports the quota rules at now; agent "" reports no session.
func (s *State) QuotaReport(now int64, id string) QuotaReport {
	out := QuotaReport{Active: s.cfg.QuotaActive(), DefaultEnabled: s.cfg.Quota.DefaultEnabled}
	for i := range s.cfg.Pools {
		p := &s.cfg.Pools[i]
		pr := PoolReport{Name: p.Name}
		pr.Choice, pr.Usable = s.chooseRoute(now, p, Channel{}, fitNeed{})
		for _, r := range p.Routes {
			t, why := s.routeTier(now, r)
			pr.Routes = append(pr.Routes, RouteReport{Route: r, Usable: t >= 0, Why: why})
		}
		out.Pools = append(out.Pools, pr)
	}
	for _, name := range s.quotaProviders() {
		pr := ProviderReport{Provider: name}
		if s.marked(now, name) {
			b := &s.providers[name].breaker
			pr.MarkedAtMs, pr.MarkedUntilMs = b.markedAtMs, b.openUntilMs
		}
		if b := s.cfg.balance(name); b != nil {
			pr.HasBalance, pr.Unit, pr.MinimumRemaining, pr.RefreshMs = true, b.Unit, b.MinimumRemaining, b.RefreshMs
			pr.Stale = s.stale(now, b)
			if sl := s.q.refresh[name]; sl != nil && sl.inFlightMs != 0 && now < sl.inFlightMs+b.TimeoutMs+refreshSlackMs {
				pr.Refreshing = true
			}
			if r, ok := s.q.readings[name]; ok {
				pr.Reading = &ReadingReport{AtMs: r.atMs, OK: r.ok, Remaining: r.remaining, ResetsAtMs: r.resetsAtMs}
			}
		}
		out.Providers = append(out.Providers, pr)
	}
	if id != "" {
		a := s.agents.lookup(id)
		if a == nil {
			a = &agent{} // not seen yet: its defaults
		}
		sr := &SessionReport{QuotaSession: s.sessionEffect(id, a)}
		if a.q.wait != nil {
			w := s.waitEffect(id, a.q.wait, WaitWaiting, "")
			sr.Wait = &w
		}
		out.Session = sr
	}
	return out
}
