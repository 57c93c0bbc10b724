package policy

import (
	"fmt"
	"math"
)

// Quota rules. A spent allowance is not an outage: it lasts until a reset (an
// hour, a day, a month). When the row configures `pools` or `quota`, a
// quota-class failure marks the whole provider exhausted (its provider
// breaker opens: one account backs all of its models), the session moves to
// a usable route of its pool at once, and when none is left the turn is held
// in a long-term wait, retried once per LongTermDelayMs for as long as it
// takes. Without either key the engine treats quota failures as before.

// Quota defaults.
const (
	// DefaultLongTermDelayMs: one retry an hour. Allowances reset on the hour
	// at the soonest (five-hour windows, daily and monthly caps); a retry
	// every minute would be a thousand wasted requests over a day's cap.
	DefaultLongTermDelayMs = 3_600_000
	// MaxLongTermDelayMs is the longest delay a host timer can hold (2^31-1 ms, ~24.8 days).
	MaxLongTermDelayMs = math.MaxInt32
	// DefaultExhaustedCooldownMs: how long an exhaustion mark keeps new work
	// off a provider when nothing says otherwise. An hour, like the wait: a
	// reset time in the failure, or a balance reading showing allowance
	// again, ends it sooner or later.
	DefaultExhaustedCooldownMs = 3_600_000
	// minQuotaMs: shorter delays are typos (and would spin).
	minQuotaMs = 100
)

// QuotaConfig is the row's `quota` object.
type QuotaConfig struct {
	// Active: the row has `pools` or `quota`. Without them the engine keeps
	// its own handling of quota failures (failover, bounded waits).
	Active bool
	// LongTermDelayMs is the delay between attempts of a long-term wait.
	LongTermDelayMs int64
	// DefaultEnabled is the per-session switch's value until a session sets
	// it: on, or opt-in (false).
	DefaultEnabled bool
	// FailOpen: a route whose provider reported nothing is usable.
	FailOpen bool
	// ExhaustedCooldownMs is an exhaustion mark's lifetime (a provider's
	// reset time, in its Retry-After or wording, extends it).
	ExhaustedCooldownMs int64
	// Balances are the balance scripts, one per provider (balance.go).
	Balances []Balance
}

// DefaultQuotaConfig is every quota default, inactive.
func DefaultQuotaConfig() QuotaConfig {
	return QuotaConfig{LongTermDelayMs: DefaultLongTermDelayMs, DefaultEnabled: true, FailOpen: true,
		ExhaustedCooldownMs: DefaultExhaustedCooldownMs}
}

func (q QuotaConfig) validate() error {
	switch {
	case q.LongTermDelayMs < minQuotaMs || q.LongTermDelayMs > MaxLongTermDelayMs:
		return &FieldError{"quota.longTermDelayMs", fmt.Sprintf("must be between %d and %d (the longest timer a host holds)", minQuotaMs, MaxLongTermDelayMs)}
	case q.ExhaustedCooldownMs < minQuotaMs || q.ExhaustedCooldownMs > week:
		return &FieldError{"quota.exhaustedCooldownMs", fmt.Sprintf("must be between %d and one week", minQuotaMs)}
	}
	return validateBalances(q.Balances)
}

// QuotaActive reports whether the quota rules apply: the row has pools or a quota object.
func (c *Config) QuotaActive() bool { return c.Quota.Active || len(c.Pools) > 0 }

// Per-session settings.

// SwitchMode is a session's quota switch as the user set it.
type SwitchMode string

const (
	SwitchOn      SwitchMode = "on"
	SwitchOff     SwitchMode = "off"
	SwitchDefault SwitchMode = "default" // the row's defaultEnabled
)

// PoolMode is how a session's pool was set.
type PoolMode string

const (
	PoolNamed   PoolMode = "pool"    // the session chose a pool
	PoolOff     PoolMode = "off"     // never change provider for quota
	PoolDefault PoolMode = "default" // the one pool holding the session's route, if any
)

// SettingSource is where a session's effective setting comes from
// (QuotaSession, reports).
type SettingSource string

const (
	SourceDefault  SettingSource = "default"  // the row's default
	SourceSession  SettingSource = "session"  // the session set it
	SourceInferred SettingSource = "inferred" // the one pool holding the session's route
	SourceOff      SettingSource = "off"      // the session turned pools off
	// SourceInherited: a forked or delegated session holds its nearest
	// ancestor's explicit setting, taken once as a snapshot (the seed's
	// `inherited`); `default` clears it back to the row's default.
	SourceInherited SettingSource = "inherited"
)

// SetQuota is `/resilience quota on|off|default` for one agent's session.
type SetQuota struct {
	Agent string
	Mode  SwitchMode
	// Inherited: the setting is the session's ancestor's, taken as a snapshot.
	Inherited bool
}

// SetPool is `/resilience pool <pool>|off|default` for one agent's session.
// An unknown pool changes nothing (the shim refuses it first).
type SetPool struct {
	Agent string
	Mode  PoolMode
	Pool  string
	// Inherited: the setting is the session's ancestor's, taken as a snapshot.
	Inherited bool
}

func (SetQuota) isEvent() {}
func (SetPool) isEvent()  {}

// agentQuota is one agent's quota state.
type agentQuota struct {
	// What every routing decision reads (poolPreferences) first.
	pool       string // the pool the route below belongs to; "" when the agent is on the chain
	route      Route
	switchMode SwitchMode // "" is default
	poolMode   PoolMode   // "" is default
	poolName   string     // with PoolNamed
	// The switch and the pool are the ancestor's, taken as a snapshot (SourceInherited).
	switchInherited, poolInherited bool
	wait                           *longWait
}

// longWait is a held turn waiting for an allowance to come back.
type longWait struct {
	enteredAtMs, nextAtMs int64
	attempts              int
	provider              string
	pool                  string
}

func (s *State) quotaEnabled(a *agent) bool {
	switch a.q.switchMode {
	case SwitchOn:
		return true
	case SwitchOff:
		return false
	}
	return s.cfg.Quota.DefaultEnabled
}

// sessionPool is the pool the agent's requests use, and where that comes from.
func (s *State) sessionPool(a *agent, on Channel) (*Pool, SettingSource) {
	switch a.q.poolMode {
	case PoolOff:
		return nil, SourceOff
	case PoolNamed:
		if a.q.poolInherited {
			return s.cfg.pool(a.q.poolName), SourceInherited
		}
		return s.cfg.pool(a.q.poolName), SourceSession
	}
	if p := s.cfg.InferPool(on); p != nil {
		return p, SourceInferred
	}
	return nil, SourceDefault
}

// routingPool is the pool a session's requests may be moved within: the
// session's pool while its switch is on. The seed: the switch "covers the
// route move as much as the wait"; with it off, an exhausted allowance is
// delegated unchanged, so no pool route stands in for the route the session
// is on (the engine's ordinary handling, the chain, is what is left).
func (s *State) routingPool(a *agent, on Channel) *Pool {
	if !s.quotaEnabled(a) {
		return nil
	}
	p, _ := s.sessionPool(a, on)
	return p
}

// pinned reports whether the session stays on current although its
// provider carries an exhaustion mark: pool off with the switch on. The
// seed's `off`: "This session never changes provider. An exhausted
// allowance is waited out where it is, however long that takes." A chain
// does not change that: the mark keeps the session where it is (its
// requests wait for the allowance, the wait is cut when the mark ends),
// while a failure of another kind still walks the chain. No clock: a
// lapsed mark leaves current routable, where an unpinned walk starts too.
func (s *State) pinned(a *agent, current Channel) (prefs, bool) {
	if a.q.poolMode != PoolOff || current.IsZero() || !s.cfg.QuotaActive() || !s.quotaEnabled(a) {
		return prefs{}, false
	}
	p := s.providerBreaker(current.Provider)
	if p == nil || p.markedAtMs == 0 || p.state != Open {
		return prefs{}, false
	}
	return prefs{first: current, need: a.need}, true
}

func (s *State) onSetQuota(now int64, e SetQuota, fx *[]Effect) {
	a := s.agents.get(e.Agent, now)
	defer s.agents.place(a)
	a.q.switchMode, a.q.switchInherited = e.Mode, e.Inherited
	if e.Mode == SwitchDefault {
		a.q.switchMode, a.q.switchInherited = "", false
	}
	if !s.quotaEnabled(a) && a.q.wait != nil {
		s.leaveWait(a, e.Agent, LeftDisabled, fx)
	}
	*fx = append(*fx, s.sessionEffect(e.Agent, a))
}

func (s *State) onSetPool(now int64, e SetPool, fx *[]Effect) {
	a := s.agents.get(e.Agent, now)
	defer s.agents.place(a)
	from := a.q.route
	if e.Mode != PoolNamed || s.cfg.pool(e.Pool) != nil {
		a.q.poolInherited = e.Inherited && e.Mode != PoolDefault
	}
	switch e.Mode {
	case PoolNamed:
		p := s.cfg.pool(e.Pool)
		if p == nil {
			break // unknown: nothing changes
		}
		s.clearPick(e.Agent, a, fx) // choosing a pool ends the user's own pick
		a.q.poolMode, a.q.poolName, a.q.pool = PoolNamed, p.Name, p.Name
		a.q.route, _ = s.chooseRoute(now, p, Channel{}, a.need)
		*fx = append(*fx, QuotaRouted{Agent: e.Agent, Pool: p.Name, From: from, To: a.q.route, Cause: CauseAssigned})
	case PoolOff:
		a.q.poolMode, a.q.poolName, a.q.pool, a.q.route = PoolOff, "", "", Route{}
	default:
		s.clearPick(e.Agent, a, fx) // so does going back to the default
		a.q.poolMode, a.q.poolName = "", ""
		on := a.q.route.Channel
		if on.IsZero() {
			on = a.routed
		}
		if p := s.cfg.InferPool(on); p != nil {
			a.q.pool = p.Name
			a.q.route, _ = p.route(on)
		} else {
			a.q.pool, a.q.route = "", Route{}
		}
	}
	*fx = append(*fx, s.sessionEffect(e.Agent, a))
}

func (s *State) sessionEffect(id string, a *agent) QuotaSession {
	out := QuotaSession{Agent: id, Enabled: s.quotaEnabled(a), EnabledSource: SourceDefault, Route: a.q.route}
	if a.q.switchMode != "" {
		out.EnabledSource = SourceSession
		if a.q.switchInherited {
			out.EnabledSource = SourceInherited
		}
	}
	on := a.q.route.Channel
	if on.IsZero() {
		on = a.routed
	}
	if p, src := s.sessionPool(a, on); p != nil {
		out.Pool, out.PoolSource = p.Name, src
	} else {
		out.PoolSource = src
	}
	return out
}

// quotaBeforeRequest settles which pool route the agent's request should take:
// the route it is on, unless its provider is marked exhausted (or its channel
// is open), in which case it moves to the best usable route of its pool. A
// low balance reading alone never moves a running session.
func (s *State) quotaBeforeRequest(now int64, a *agent, id string, proposed Channel, fx *[]Effect) {
	if !s.cfg.QuotaActive() {
		return
	}
	if !a.pick.IsZero() {
		// The user's own pick is not moved; its pool (named, or the one that
		// holds it) is where a failover goes (pickPreferences).
		a.q.pool, a.q.route = "", Route{}
		if p, _ := s.sessionPool(a, a.pick); p != nil {
			a.q.pool = p.Name
			a.q.route, _ = p.route(a.pick)
		}
		return
	}
	on := a.q.route.Channel
	if on.IsZero() {
		on = proposed
	}
	p, _ := s.sessionPool(a, on)
	if p == nil {
		a.q.pool, a.q.route = "", Route{}
		return
	}
	if a.q.pool != p.Name || !p.holds(a.q.route.Channel) {
		// A session new to the pool: it keeps the pool route it is on when that
		// is usable, else it gets route choice (a low reading keeps new
		// sessions off a provider).
		a.q.pool = p.Name
		own, onRoute := p.route(proposed)
		if onRoute {
			// With the switch off nothing moves it off the route it is on (routingPool).
			if t, _ := s.routeTier(now, own); t >= 0 || !s.quotaEnabled(a) {
				a.q.route = own
				return
			}
		}
		r, ok := s.chooseRoute(now, p, Channel{}, a.need)
		if !ok && onRoute {
			// Nothing usable: the session stays on the host's own channel,
			// whose window is the host's to keep, and waits for it. The
			// pool's first route is no choice of anyone's. Issue #17, seed 54
			// (24 h, 10m30s): a 73k session new to its pool after a restart,
			// its own 64k route open and no route holding it, was sent to the
			// pool's first route, of 32k.
			r = own
		}
		a.q.route = r
	}
	s.refitRoute(now, a, id, p, proposed, fx)
	if !s.quotaEnabled(a) || s.servable(now, a.q.route.Channel) && s.routable(now, a.q.route.Channel) {
		return // the switch covers this move too (routingPool)
	}
	if r, ok := s.moveRoute(now, p, Channel{}, a.need); ok && r.Channel != a.q.route.Channel {
		from := a.q.route
		a.q.route = r
		*fx = append(*fx, QuotaRouted{Agent: id, Pool: p.Name, From: from, To: r, Cause: CauseExhausted})
	}
}

// poolPreferences replaces the chain in an agent's preferences when it is in
// a pool: its route first, then the user's backup, then the pool's routes
// (walked in place, no list built).
//
// The route is the session's own, spared its declared window as the host's
// proposal is, only while it can hold the request or is the proposal: the
// host compacts for the channel it proposed, not for the route (refitRoute
// moves a session off a route it outgrew when another holds it; when none
// does, the route stays named but spared nothing). Issue #17, seed 54 (120
// agents, 24 h, 12h53m): a 62k session, refused at 51k by the 32k model
// the host proposed, went to its 64k route (51k usable) as its own.
func (s *State) poolPreferences(a *agent, current Channel) (prefs, bool) {
	if a.q.pool == "" || a.q.route.Channel.IsZero() {
		return prefs{}, false
	}
	p := s.cfg.pool(a.q.pool)
	if p == nil {
		return prefs{}, false
	}
	r := a.q.route.Channel
	ps := prefs{first: r, backup: s.backup, pool: p, need: a.need,
		outgrown: r != current && a.need.any() && !s.fits(r, a.need)}
	if !s.quotaEnabled(a) {
		// The switch off: the route it is on, then the engine's own order
		// (routingPool), never another route of the pool.
		ps.pool, ps.chain = nil, s.cfg.Chain
	}
	return ps, true
}

// fallbackTarget is where a request goes when nothing is routable: a pooled
// agent's route (an all-unusable pool answers with its first route), else
// the proposed channel. A route that refused as long a context is a sure
// CONTEXT_WINDOW_EXCEEDED the module chose: the request goes to the host's
// own proposal instead, as a session outside a pool does, whose window the
// host compacts for (docs/decisions.md, context fit: never a request into a
// sure refusal; the session's requests stay off a channel that refused as
// long a context). Issue #17, seed 14: a 424k-token session whose pool route
// (200k) had refused 320k was sent back to it once the pool's 1M route opened.
//
// A route the context outgrew is not the session's own unless the host
// proposed it (poolPreferences): it must fit as any other target, else the
// request goes to the proposal. Issue #17, seed 14 (120 agents, 24 h,
// 23h8m): a 189k-token session running on the user's backup (no declared
// window) was sent, once both were open, to the pool route named for it
// (200k, 160k usable), where the host would compact on arrival, rather than
// to the backup it was on; seed 54 the same from a pool route it ran on.
func (s *State) fallbackTarget(a *agent, proposed Channel) Channel {
	r := a.q.route.Channel
	if a.q.pool == "" || r.IsZero() || s.refusedFor(r, a.need) {
		return proposed
	}
	if r != proposed && a.need.any() && !s.fits(r, a.need) {
		return proposed // a route the context outgrew is not the session's own (poolPreferences)
	}
	return r
}

// routeEffort is the reasoning effort of the pool route target, when it has
// one and the host says the target's model lists it.
func (s *State) routeEffort(a *agent, target Channel) (string, bool) {
	r := a.q.route
	if a.q.pool == "" || r.Channel != target || r.ReasoningEffort == "" || !s.keepsEffort(target, r.ReasoningEffort) {
		return "", false
	}
	return r.ReasoningEffort, true
}

// onQuotaFailure handles a quota-class failure under the quota rules: mark
// the provider, move within the pool (or along the chain) at once, and when
// nothing is usable hold the turn in a long-term wait.
func (s *State) onQuotaFailure(now int64, a *agent, e RequestError, ch Channel, fx *[]Effect) Verdict {
	if c := s.circuits[ch]; c != nil {
		c.release(e.Agent) // a failed half-open probe of the channel: the mark says more
	}
	s.mark(now, ch.Provider, e.Failure.RetryAfterMs, e.Failure.Code, fx)
	on := a.q.route.Channel
	if on.IsZero() {
		on = ch
	}
	if !a.pick.IsZero() {
		// The next request walks the pick's pool, else the chain
		// (quotaBeforeRequest, pickPreferences): a move within the pool of
		// the route it failed on would be undone there, sending every retry
		// back to the exhausted provider.
		on = a.pick
	}
	if !s.quotaEnabled(a) {
		// The seed: "A session whose switch is off delegates an exhausted
		// allowance unchanged ... it covers the route move as much as the
		// wait." Neither a move within the pool nor a wait: the engine's
		// ordinary handling, as with no quota rules (the chain, else the
		// failure goes back to the host), its recovery clock started here as
		// there (requesterror.go starts it after this branch: the chain's
		// wait read it as started at 0 and gave up at once).
		if a.recoveringSince == 0 {
			a.recoveringSince = now
		}
		return s.failover(now, a, e, ch, ClassQuota, fx)
	}
	p, _ := s.sessionPool(a, on)
	if p != nil {
		if r, ok := s.moveRoute(now, p, ch, a.need); ok {
			from, _ := p.route(ch)
			if from.Channel.IsZero() {
				from = Route{Channel: ch}
			}
			a.q.pool, a.q.route = p.Name, r
			a.attempts = 0
			a.savedHome = a.home // the shell keeps it from the failover
			s.noteSkipped(e.Agent, a, a.need, fx, false)
			*fx = append(*fx, FailedOver{Agent: e.Agent, From: ch, To: r.Channel, Code: e.Failure.Code, Class: ClassQuota, Home: a.home},
				QuotaRouted{Agent: e.Agent, Pool: p.Name, From: from, To: r, Cause: e.Failure.Code})
			return Verdict{Kind: Retry}
		}
	}
	// Along the chain while a failover is left; spent, the turn waits for the
	// allowance as it does with nothing routable. Ending it only when another
	// target was routable made a session with more options fare worse, and a
	// user who turned the quota rules on asked for the wait. Pool off never
	// changes provider for it (pinned): it waits where it is.
	if p == nil && a.q.poolMode != PoolOff && a.failovers < s.cfg.MaxFailovers {
		if _, ok := s.firstRoutable(now, s.preferences(a, ch), ch); ok {
			return s.failover(now, a, e, ch, ClassQuota, fx)
		}
	}
	return s.enterWait(now, a, e, ch, p, fx)
}

// enterWait holds the turn for LongTermDelayMs, then the same request is
// retried. No attempt limit and no giveUpAfterMs: an allowance comes back on
// its own schedule, and the user ends the wait (cancel, or the switch).
func (s *State) enterWait(now int64, a *agent, e RequestError, ch Channel, p *Pool, fx *[]Effect) Verdict {
	d := s.cfg.Quota.LongTermDelayMs
	phase := WaitWaiting
	if a.q.wait == nil {
		a.q.wait = &longWait{enteredAtMs: now}
		phase = WaitEntered
	}
	w := a.q.wait
	w.attempts++
	w.nextAtMs = now + d
	w.provider = ch.Provider
	w.pool = ""
	target := ch
	if p != nil {
		w.pool = p.Name
		// An all-unusable pool answers its first route that can hold the request (fit.go).
		r, _ := s.chooseRoute(now, p, Channel{}, a.need)
		s.skipped = s.skipped[:0] // already said by the failure's own decision, or nothing to say
		a.q.pool, a.q.route = p.Name, r
		target = r.Channel
	}
	a.failovers, a.attempts, a.recoveringSince = 0, 0, 0 // the engine's budgets do not bound this wait
	s.hold(a, w.nextAtMs)                                // ended early when a channel it may use is back (hold.go)
	*fx = append(*fx, s.waitEffect(e.Agent, w, phase, ""),
		Retrying{Agent: e.Agent, Channel: target, Attempt: w.attempts, DelayMs: d, Code: e.Failure.Code})
	return Verdict{Kind: Wait, DelayMs: d, Held: true}
}

// quotaSettled ends a long-term wait whose retry went through.
func (s *State) quotaSettled(a *agent, id string, fx *[]Effect) {
	if a.q.wait != nil {
		s.leaveWait(a, id, LeftRecovered, fx)
	}
}

func (s *State) leaveWait(a *agent, id string, reason LeftReason, fx *[]Effect) {
	s.unhold(a)
	*fx = append(*fx, s.waitEffect(id, a.q.wait, WaitLeft, reason))
	a.q.wait = nil
}

func (s *State) waitEffect(id string, w *longWait, phase WaitPhase, reason LeftReason) QuotaWait {
	return QuotaWait{Agent: id, Phase: phase, Reason: reason, Provider: w.provider, Pool: w.pool,
		EnteredAtMs: w.enteredAtMs, Attempts: w.attempts, NextAttemptAtMs: w.nextAtMs}
}

// Effects of the quota rules.

// WaitPhase is where a long-term wait is (QuotaWait).
type WaitPhase string

const (
	WaitEntered WaitPhase = "entered" // the first attempt of a wait
	WaitWaiting WaitPhase = "waiting" // a later attempt failed the same way: waiting again
	WaitLeft    WaitPhase = "left"
)

// LeftReason is why a long-term wait was left (QuotaWait with WaitLeft).
type LeftReason string

const (
	LeftRecovered LeftReason = "recovered" // a retry went through
	LeftDisabled  LeftReason = "disabled"  // the session's switch was turned off
)

// Causes of a QuotaRouted move besides a failure code.
const (
	CauseAssigned  = "assigned"  // the session was put into the pool
	CauseExhausted = "exhausted" // its route's provider was marked meanwhile
	CauseOutgrown  = "outgrown"  // its context outgrew the route's window (refitRoute)
)

// QuotaWait reports a long-term wait entered, waiting again, or left: the
// shell emits llm-quota-retry/entered or /left and keeps the wait cancellable
// by the session's switch.
type QuotaWait struct {
	Agent           string
	Phase           WaitPhase
	Reason          LeftReason // with WaitLeft
	Provider        string
	Pool            string
	EnteredAtMs     int64
	Attempts        int
	NextAttemptAtMs int64
}

// QuotaRouted reports a session moved to another route of its pool.
type QuotaRouted struct {
	Agent    string
	Pool     string
	From, To Route
	Cause    string // the failure code, CauseAssigned or CauseExhausted
}

// QuotaSession reports a session's quota settings after a command changed them.
type QuotaSession struct {
	Agent         string
	Enabled       bool
	EnabledSource SettingSource
	Pool          string
	PoolSource    SettingSource
	Route         Route
}

func (QuotaWait) isEffect()    {}
func (QuotaRouted) isEffect()  {}
func (QuotaSession) isEffect() {}

// refitRoute moves a session off a pool route its context has outgrown. The
// route was chosen when the context was short; it stays the session's own
// (spared its declared window, route.go walk) only while it can hold the
// request, since the host compacts for the channel it proposed, not for the
// route. So a route too small gives way to the proposal when that is a
// routable pool route that has not refused as long a context (the host's own
// channel, its window the host's to keep: a running session stays where it
// is), else to the pool route it runs on when that holds it, else to the
// pool's best usable route that holds it; with none it stays. A move is
// said (quota-routed, cause outgrown) as every route change is.
// Issue #17, seeds 52 and 54 (120 agents, 24 h): a 36k session went back to
// its 32k route, a 314k one to its 200k route, once the route's circuit closed.
func (s *State) refitRoute(now int64, a *agent, id string, p *Pool, proposed Channel, fx *[]Effect) {
	on := a.q.route.Channel
	if on.IsZero() || !a.need.any() || s.fits(on, a.need) {
		return
	}
	move := func(r Route) {
		s.noteSkip(on)
		*fx = append(*fx, QuotaRouted{Agent: id, Pool: p.Name, From: a.q.route, To: r, Cause: CauseOutgrown})
		a.q.route = r
	}
	if r, ok := p.route(proposed); ok && proposed != on && s.servable(now, proposed) && s.routable(now, proposed) &&
		!s.marked(now, proposed.Provider) && !s.refusedFor(proposed, a.need) {
		move(r)
		return
	}
	// Where its last request went, when that holds it: a low reading alone
	// never moves a running session (issue #17, seed 52, 4h43m: a 163k
	// session running on a route of no declared window went back to its
	// 200k route as that route's circuit half-opened).
	if r, ok := p.route(a.routed); ok && a.routed != on && s.servable(now, a.routed) && s.routable(now, a.routed) &&
		!s.marked(now, a.routed.Provider) && s.fits(a.routed, a.need) {
		move(r)
		return
	}
	if r, ok := s.chooseRoute(now, p, on, a.need); ok {
		move(r)
	}
}
