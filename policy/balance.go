package policy

import (
	"fmt"
	"math"
	"sort"
)

// Balance scripts and readings. A provider's remaining allowance comes from
// a script the operator names (run by the shell through the host's
// subprocess service); the policy decides when each runs, keeps the latest
// reading, and lets readings close exhaustion marks and keep new sessions
// off a provider that is running low. Requests never wait for a script:
// decisions read cached readings only.

// Balance defaults.
const (
	// DefaultBalanceTimeoutMs: a balance endpoint answers in well under a
	// second; ten seconds is generous, and a script that takes longer yields
	// a missing reading rather than a stuck refresh.
	DefaultBalanceTimeoutMs = 10_000
	// DefaultBalanceRefreshMs: every five minutes. Balances move with use,
	// but a reading minutes old is good enough to steer new sessions, and
	// balance endpoints are often rate-limited themselves.
	DefaultBalanceRefreshMs = 300_000
	// refreshSlackMs frees a refresh whose reading never came (the shell lost
	// it) this long after its timeout.
	refreshSlackMs      = 5_000
	maxBalanceTimeoutMs = 600_000
	minBalanceRefreshMs = 1_000
	maxUnit             = 16
)

// Balance is one provider's balance script.
type Balance struct {
	Provider string
	// Script is argv, never a shell line.
	Script    []string
	TimeoutMs int64
	RefreshMs int64
	// APIKeyEnv names the credential the shell resolves through the host's
	// credential service at every run and passes to the script under that name only.
	APIKeyEnv string
	// Env adds literal, non-secret variables.
	Env []EnvVar
	// MinimumRemaining: a reading below it keeps new sessions off the provider.
	MinimumRemaining float64
	// Unit names what remaining counts, for display ("CNY", "tokens").
	Unit string
}

// EnvVar is one literal environment entry of a balance script.
type EnvVar struct{ Name, Value string }

func envName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func validateBalances(bs []Balance) error {
	for i, b := range bs {
		k := fmt.Sprintf("quota.balances[%d]", i)
		switch {
		case b.Provider == "":
			return &FieldError{k + ".provider", "must be a non-empty string"}
		case len(b.Script) == 0 || b.Script[0] == "":
			return &FieldError{k + ".script", "must be an argv list whose first item names the program (never a shell line)"}
		case b.TimeoutMs < minQuotaMs || b.TimeoutMs > maxBalanceTimeoutMs:
			return &FieldError{k + ".timeoutMs", fmt.Sprintf("must be between %d and %d", minQuotaMs, maxBalanceTimeoutMs)}
		case b.RefreshMs < minBalanceRefreshMs || b.RefreshMs > week:
			return &FieldError{k + ".refreshMs", fmt.Sprintf("must be between %d and one week", minBalanceRefreshMs)}
		case b.APIKeyEnv != "" && !envName(b.APIKeyEnv):
			return &FieldError{k + ".apiKeyEnv", "must be an environment variable name"}
		case b.MinimumRemaining < 0 || math.IsNaN(b.MinimumRemaining) || math.IsInf(b.MinimumRemaining, 0):
			return &FieldError{k + ".minimumRemaining", "must be a finite number, 0 or more"}
		case len(b.Unit) > maxUnit:
			return &FieldError{k + ".unit", fmt.Sprintf("must be at most %d characters", maxUnit)}
		}
		for j := 0; j < i; j++ {
			if bs[j].Provider == b.Provider {
				return &FieldError{k + ".provider", fmt.Sprintf("duplicates quota.balances[%d] (%q): one script per provider", j, b.Provider)}
			}
		}
		for j, v := range b.Env {
			ek := fmt.Sprintf("%s.env[%d].name", k, j)
			if !envName(v.Name) {
				return &FieldError{ek, "must be an environment variable name"}
			}
			if v.Name == b.APIKeyEnv {
				return &FieldError{ek, "is apiKeyEnv: the credential comes from the host's credential service, never from the config"}
			}
			for m := 0; m < j; m++ {
				if b.Env[m].Name == v.Name {
					return &FieldError{ek, fmt.Sprintf("duplicates env[%d]", m)}
				}
			}
		}
	}
	return nil
}

func (c *Config) balance(provider string) *Balance {
	for i := range c.Quota.Balances {
		if c.Quota.Balances[i].Provider == provider {
			return &c.Quota.Balances[i]
		}
	}
	return nil
}

// BalanceReading is a balance script's result for Provider. OK is false for
// a missing reading: non-zero exit, timeout, bad JSON, oversized output.
type BalanceReading struct {
	Provider   string
	OK         bool
	Remaining  float64
	ResetsAtMs int64 // 0 when the script did not say
}

func (BalanceReading) isEvent() {}

// reading is the latest result of a provider's script.
type reading struct {
	atMs       int64
	ok         bool
	remaining  float64
	resetsAtMs int64
}

// refreshSlot is a provider's script schedule: the last run started at
// lastRunMs; a run is in flight since inFlightMs (0: none).
type refreshSlot struct {
	lastRunMs, inFlightMs int64
}

// quotaState is the quota rules' part of the State.
type quotaState struct {
	readings  map[string]reading
	refresh   map[string]*refreshSlot
	refreshAt int64 // the last ScheduleRefresh sent
}

func newQuotaState() quotaState {
	return quotaState{readings: map[string]reading{}, refresh: map[string]*refreshSlot{}}
}

// mark opens the provider's breaker for an exhausted allowance: for
// ExhaustedCooldownMs, or as long as the provider said (Retry-After, or a
// reset time in its wording), whichever is longer. The mark is the provider
// breaker's own (markedAtMs), so it is kept and shared with the breaker's
// health record (merge.go): the file and Redis carry it, versioned.
func (s *State) mark(now int64, provider string, retryAfterMs int64, code string, fx *[]Effect) {
	p := &s.provider(provider).breaker
	until := now + max(s.cfg.Quota.ExhaustedCooldownMs, retryAfterMs)
	p.markedAtMs, p.lastCode = now, code // the record says what spent it
	if p.state == Open && p.openUntilMs >= until {
		return // already marked for at least as long
	}
	p.openUntilMs = until
	p.transition(now, Open, code, ClassQuota, fx)
}

// marked reports whether the provider carries a live exhaustion mark.
func (s *State) marked(now int64, provider string) bool {
	p := s.providerBreaker(provider)
	return p != nil && p.markedAtMs != 0 && p.state == Open && now < p.openUntilMs
}

// shows reports whether a reading shows allowance: more than nothing, and
// not below the provider's minimumRemaining.
func (r reading) shows(b *Balance) bool {
	return r.ok && r.remaining > 0 && (b == nil || r.remaining >= b.MinimumRemaining)
}

func (s *State) onBalanceReading(now int64, e BalanceReading, fx *[]Effect) {
	b := s.cfg.balance(e.Provider)
	if b == nil {
		return // no script for it: not ours to record
	}
	slot := s.slot(e.Provider)
	if slot.inFlightMs == 0 {
		slot.lastRunMs = now // an out-of-schedule run (a route pick refreshing first)
	}
	slot.inFlightMs = 0
	r := reading{atMs: now, ok: e.OK, remaining: e.Remaining, resetsAtMs: e.ResetsAtMs}
	s.q.readings[e.Provider] = r
	// A reading taken at least one refresh interval after the mark, showing
	// allowance again, lifts it early: one taken at once may predate the
	// provider's own accounting catching up.
	if s.marked(now, e.Provider) && r.shows(b) {
		if p := &s.providers[e.Provider].breaker; now >= p.markedAtMs+b.RefreshMs {
			p.markedAtMs = 0
			p.transition(now, Closed, "balance-restored", "", fx)
		}
	}
}

func (s *State) slot(provider string) *refreshSlot {
	sl := s.q.refresh[provider]
	if sl == nil {
		sl = &refreshSlot{}
		s.q.refresh[provider] = sl
	}
	return sl
}

// refreshDue is when provider's script should next run: never run yet (now),
// one refresh interval after the last run started, or, while one is in
// flight, when that run is given up on.
func (s *State) refreshDue(b *Balance) int64 {
	sl := s.slot(b.Provider)
	if sl.inFlightMs != 0 {
		return sl.inFlightMs + b.TimeoutMs + refreshSlackMs
	}
	if sl.lastRunMs == 0 {
		return 0
	}
	return sl.lastRunMs + b.RefreshMs
}

// refreshBalances starts every script that is due, in config order, and
// asks for a wake at the next one due (ScheduleRefresh).
func (s *State) refreshBalances(now int64, fx *[]Effect) {
	var next int64
	for i := range s.cfg.Quota.Balances {
		b := &s.cfg.Quota.Balances[i]
		if s.refreshDue(b) <= now {
			sl := s.slot(b.Provider)
			sl.lastRunMs, sl.inFlightMs = now, now
			*fx = append(*fx, RefreshBalance{Provider: b.Provider})
		}
		if due := s.refreshDue(b); next == 0 || due < next {
			next = due
		}
	}
	if next != s.q.refreshAt {
		s.q.refreshAt = next
		*fx = append(*fx, ScheduleRefresh{AtMs: next})
	}
}

// stale reports whether provider's reading is missing or older than its refresh interval.
func (s *State) stale(now int64, b *Balance) bool {
	r, ok := s.q.readings[b.Provider]
	return !ok || now-r.atMs >= b.RefreshMs
}

// RefreshBalance asks the shell to run Provider's balance script and report
// a BalanceReading.
type RefreshBalance struct{ Provider string }

// ScheduleRefresh asks for a Wake at AtMs, for the next balance script due;
// it replaces the previous one, and 0 cancels it. Separate from
// ScheduleWake, which belongs to the breakers' probes.
type ScheduleRefresh struct{ AtMs int64 }

func (RefreshBalance) isEffect()  {}
func (ScheduleRefresh) isEffect() {}

// Route choice.

// RouteWhy is why a route is or is not usable (reports, tables).
type RouteWhy string

const (
	UsableReading    RouteWhy = "reading"           // a reading shows allowance
	UsableFailOpen   RouteWhy = "no-reading"        // nothing reported, failOpen
	UnusableMarked   RouteWhy = "exhausted"         // its provider carries a mark
	UnusableCircuit  RouteWhy = "circuit-open"      // the engine's breaker holds it
	UnusableHost     RouteWhy = "unservable"        // the host cannot serve it (no adapter, unknown model, no credential)
	UnusableLow      RouteWhy = "below-minimum"     // a reading shows less than minimumRemaining (or nothing)
	UnusableNoReport RouteWhy = "no-reading-closed" // nothing reported, failOpen false
)

// routeTier ranks a route for choice: 0 a reading shows allowance, 1
// nothing reported and failOpen, -1 unusable.
func (s *State) routeTier(now int64, r Route) (int, RouteWhy) {
	switch {
	case s.marked(now, r.Channel.Provider):
		return -1, UnusableMarked
	case !s.servable(now, r.Channel):
		return -1, UnusableHost
	case !s.routable(now, r.Channel):
		return -1, UnusableCircuit
	}
	b := s.cfg.balance(r.Channel.Provider)
	if rd, ok := s.q.readings[r.Channel.Provider]; ok && rd.ok {
		if rd.shows(b) {
			return 0, UsableReading
		}
		return -1, UnusableLow
	}
	if s.cfg.Quota.FailOpen {
		return 1, UsableFailOpen
	}
	return -1, UnusableNoReport
}

// chooseRoute picks the pool's best usable route, avoiding one channel (the
// one that just failed): a route with a reading showing allowance before one
// nothing reported on, declared order breaking ties. When none is usable it
// answers the pool's first route that can hold the request, and false.
func (s *State) chooseRoute(now int64, p *Pool, avoid Channel, n fitNeed) (Route, bool) {
	best, tier, fallback := -1, 2, 0
	fitting := false
	for i, r := range p.Routes {
		if r.Channel == avoid || n.any() && s.skip(r.Channel, n) { // too small for the request (fit.go)
			continue
		}
		if !fitting {
			fallback, fitting = i, true // none usable: the first that can hold the request, not a sure refusal
		}
		if t, _ := s.routeTier(now, r); t >= 0 && t < tier {
			best, tier = i, t
		}
	}
	if best < 0 {
		return p.Routes[fallback], false
	}
	return p.Routes[best], true
}

// moveRoute is route choice for a move off a route whose provider reported
// its allowance spent (a quota failure, or a route marked meanwhile). The
// seed's words: "the first route in declared order that is not out of
// allowance and clears its own threshold, or failing that any route that is
// merely not out of allowance — because a route with little left can still
// be the one that answers". So when no route clears its threshold, a route
// whose reading is below its minimumRemaining but above nothing is taken
// (declared order) before the long-term wait. A threshold chooses; it never
// makes a session wait an hour while a route with allowance left is there.
// A route nothing vouches for under failOpen false, or whose reading shows
// nothing left, is out of allowance still.
func (s *State) moveRoute(now int64, p *Pool, avoid Channel, n fitNeed) (Route, bool) {
	r, ok := s.chooseRoute(now, p, avoid, n)
	if ok {
		return r, true
	}
	for _, low := range p.Routes {
		if low.Channel == avoid || n.any() && s.skip(low.Channel, n) {
			continue
		}
		if s.leftBelowMinimum(now, low) {
			return low, true
		}
	}
	return r, false
}

// leftBelowMinimum reports whether a route is unusable only because its
// reading is under its provider's minimumRemaining: something is left.
func (s *State) leftBelowMinimum(now int64, r Route) bool {
	if _, why := s.routeTier(now, r); why != UnusableLow {
		return false
	}
	rd := s.q.readings[r.Channel.Provider]
	return rd.ok && rd.remaining > 0
}

// PickRoute is route choice for a new session put into the named pool, as
// the llmQuotaRetry service's pickRoute answers it.
func (s *State) PickRoute(now int64, pool string) (Route, bool, bool) {
	p := s.cfg.pool(pool)
	if p == nil {
		return Route{}, false, false
	}
	r, usable := s.chooseRoute(now, p, Channel{}, fitNeed{})
	return r, usable, true
}

// quotaProviders lists the providers the quota rules know: balance scripts
// first (config order), then pool routes' and marked providers, sorted.
func (s *State) quotaProviders() []string {
	seen := map[string]bool{}
	var out, rest []string
	for _, b := range s.cfg.Quota.Balances {
		seen[b.Provider] = true
		out = append(out, b.Provider)
	}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			rest = append(rest, p)
		}
	}
	for _, p := range s.cfg.Pools {
		for _, r := range p.Routes {
			add(r.Channel.Provider)
		}
	}
	for name, p := range s.providers {
		if p.breaker.markedAtMs != 0 {
			add(name)
		}
	}
	sort.Strings(rest)
	return append(out, rest...)
}

// Reading a script's output. The shim runs the script and hands its stdout
// over (the `balance-output` export); the codec reads the JSON and the
// time, and the rule below decides what the output says.

// BalanceOutput is what a script printed, as the codec read it.
type BalanceOutput struct {
	// Object: the output is one JSON object (not JSON, or another value, is not).
	Object bool
	// Remaining is a finite number; HasRemaining false when it is absent,
	// not a number, or not finite.
	HasRemaining bool
	Remaining    float64
	// ResetsAtMs is resetsAt as epoch ms; BadResetsAt when present and not
	// an RFC 3339 time (or a date) at or after the epoch.
	ResetsAtMs  int64
	BadResetsAt bool
	// Refused: an `error` beside the reading (any value but null, false or "").
	Refused bool
}

// Why a script's output is a missing reading (the audit line's `why`; never the output).
const (
	MissingNotJSON   = "not JSON"
	MissingRemaining = "no numeric remaining"
	MissingResetsAt  = "bad resetsAt"
	MissingRefused   = "provider refused"
)

// ReadBalance decides what a script's output is: a reading, or a missing
// one and why. The contract: "a provider's own refusal can be reported with
// error alongside a reading", and "Everything else is a missing reading, not
// an error". A refusal is the provider declining to say (a rejected key, an
// endpoint down), so the number beside it is nobody's word: a missing
// reading, which leaves the route to the exhaustion mark and failOpen, never
// one that lifts a mark or moves a session.
func ReadBalance(provider string, o BalanceOutput) (BalanceReading, string) {
	missing := BalanceReading{Provider: provider}
	switch {
	case !o.Object:
		return missing, MissingNotJSON
	case o.Refused:
		return missing, MissingRefused
	case !o.HasRemaining:
		return missing, MissingRemaining
	case o.BadResetsAt:
		return missing, MissingResetsAt
	}
	return BalanceReading{Provider: provider, OK: true, Remaining: o.Remaining, ResetsAtMs: o.ResetsAtMs}, ""
}
