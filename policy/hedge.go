package policy

import (
	"fmt"
	"slices"
	"strconv"
)

// Hedged first tokens. A primary that answers, but takes twenty seconds to
// its first token, is healthy to every breaker, and the stall watchdog only
// cuts the extreme. When an agent-loop call has produced nothing by a delay,
// the same request also goes to the target a failover would pick; the first
// of the two to stream wins and the other is aborted, so nothing of it
// reaches the session (RATIONALE.md, "Why hedge inside the stream wrapper").
//
// The policy decides (whether, when, where to, within which budget) from the
// stall watchdog's own checks (StreamCheck): the shim only races the two
// calls and aborts the loser, and reports the end of the race (HedgeResult).
//
// A hedge is not a failure of the slow channel, not a failover and not a
// retry: no breaker counts it, the agent's failover budget is untouched.
// The slow-call breaker learns from it as from any call: the winner's time
// to first token, and the loser's wait when the primary lost (it was at
// least that slow).

// HedgeConfig is the row's `hedge` object. Off unless AfterMs or
// AfterPercentile is set.
type HedgeConfig struct {
	// AfterMs: a fixed delay from the call's start.
	AfterMs int64
	// AfterPercentile: the delay is this percentile of the channel's recent
	// times to first token, bounded by MinMs and MaxMs.
	AfterPercentile int
	MinMs, MaxMs    int64
	// BudgetPercent: hedges from a provider in the last minute are at most
	// this share of its requests, plus BudgetFloor (Envoy's and gRPC's
	// hedging throttle): a provider slow for everyone must not double its
	// fallback's load.
	BudgetPercent int
	BudgetFloor   int
}

const (
	DefaultHedgeMinMs         = 1_000
	DefaultHedgeMaxMs         = 30_000
	DefaultHedgeBudgetPercent = 5
	// DefaultHedgeBudgetFloor lets one hedge a minute through a provider
	// with few requests: 5 % of ten requests is none.
	DefaultHedgeBudgetFloor = 1
	// hedgeSamples: the recent first tokens kept per channel for the
	// learned delay; hedgeMinSamples below which it is MaxMs.
	hedgeSamples    = 32
	hedgeMinSamples = 8
	// maxHedgeChannels bounds the sample rings (a host names few channels;
	// a flood of unknown ones must not grow the state).
	maxHedgeChannels = 1024
)

// DefaultHedgeConfig is off: a hedge doubles a request's prompt cost, so
// only the operator can decide a slow first token is worth it.
func DefaultHedgeConfig() HedgeConfig {
	return HedgeConfig{MinMs: DefaultHedgeMinMs, MaxMs: DefaultHedgeMaxMs,
		BudgetPercent: DefaultHedgeBudgetPercent, BudgetFloor: DefaultHedgeBudgetFloor}
}

// On reports whether requests are hedged.
func (c HedgeConfig) On() bool { return c.AfterMs > 0 || c.AfterPercentile > 0 }

func (c HedgeConfig) validate() error {
	switch {
	case c.AfterMs > 0 && c.AfterPercentile > 0:
		return &FieldError{"hedge.afterMs", "set afterMs or afterPercentile, not both"}
	case c.AfterMs != 0 && (c.AfterMs < minStallMs || c.AfterMs > maxStallMs):
		return &FieldError{"hedge.afterMs", "must be 0 (off) or between 100 and 86400000 (one day)"}
	case c.AfterPercentile < 0 || c.AfterPercentile > 99:
		return &FieldError{"hedge.afterPercentile", "must be 0 (off) or between 1 and 99"}
	case c.MinMs < minStallMs || c.MinMs > maxStallMs:
		return &FieldError{"hedge.minMs", "must be between 100 and 86400000 (one day)"}
	case c.MaxMs < c.MinMs || c.MaxMs > maxStallMs:
		return &FieldError{"hedge.maxMs", "must be at least hedge.minMs and at most 86400000 (one day)"}
	case c.BudgetPercent < 0 || c.BudgetPercent > 100:
		return &FieldError{"hedge.budgetPercent", "must be between 0 and 100"}
	case c.BudgetFloor < 0 || c.BudgetFloor > 1_000_000:
		return &FieldError{"hedge.budgetFloor", "must be between 0 and 1000000"}
	}
	return nil
}

// HedgeSend, on a Watch verdict, tells the shim to send the call's request
// to To now as well, and to keep whichever streams first.
type HedgeSend struct {
	To Channel
	// DropReasoningEffort and ReasoningEffort: as on a Swap (request.go).
	DropReasoningEffort bool
	ReasoningEffort     string
	// AfterMs is the delay the hedge waited, Reason how it was chosen.
	AfterMs int64
	Reason  string
}

// HedgeWinner says which call of a race streamed first.
type HedgeWinner string

const (
	WinnerPrimary HedgeWinner = "primary"
	WinnerHedge   HedgeWinner = "hedge"
	// WinnerNone: the race ended before either streamed (End says how).
	WinnerNone HedgeWinner = "none"
)

// HedgeResult is the shim's report of a race's end: the first chunk of
// either call, or neither. Its times are the shim's clock, as StreamCheck's.
type HedgeResult struct {
	Agent  string
	Winner HedgeWinner
	// OpenedMs: when the primary call opened.
	OpenedMs int64
	// FirstTokenMs: the winner's time to its first chunk, from its own start.
	FirstTokenMs int64
	// End, when Winner is none: "cut" (the stall watchdog cut the request),
	// "cancelled" (the caller's own abort), "primary-ended" (the primary
	// ended without a token: its failure goes to the host as without a
	// hedge), "hedge-failed" (the hedge failed; the primary goes on alone).
	End  string
	Code string // the hedge's failure code, for hedge-failed
}

func (HedgeResult) isEvent() {}

var _ Event = HedgeResult{}

// Hedged reports one finished hedge: the shell audits a `hedge` record,
// counts it and emits dsh-resilience/hedge.
type Hedged struct {
	Agent    string
	From, To Channel
	AfterMs  int64
	Reason   string
	Winner   HedgeWinner
	End      string
	Code     string
	// FirstTokenMs: the request's time to its first token as the session saw
	// it (from the primary's start), when a call won.
	FirstTokenMs int64
	// LoserWaitMs: how long the aborted call had waited (what it cost so far:
	// its prompt was sent, nothing came back).
	LoserWaitMs int64
	// SavedMs: when the hedge won, the primary's median time to first token
	// before this call minus the request's; -1 when there was no median.
	SavedMs int64
}

func (Hedged) isEffect() {}

var _ Effect = Hedged{}

// hedgeRun is an agent's hedge in flight (one per agent: one request at a time).
type hedgeRun struct {
	from, to Channel
	afterMs  int64
	reason   string
	sentMs   int64
}

// ttftRing holds a channel's recent times to first token, oldest overwritten.
type ttftRing struct {
	ms [hedgeSamples]int64
	n  int // samples held, at most hedgeSamples
	at int // next slot
}

func (r *ttftRing) add(ms int64) {
	r.ms[r.at] = ms
	r.at = (r.at + 1) % hedgeSamples
	r.n = min(r.n+1, hedgeSamples)
}

// percentile is the nearest-rank p-th percentile of the samples held.
func (r *ttftRing) percentile(p int) int64 {
	xs := slices.Clone(r.ms[:r.n])
	slices.Sort(xs)
	i := (p*r.n+99)/100 - 1
	return xs[max(0, min(i, r.n-1))]
}

// noteFirstToken keeps one call's time to first token for the learned delay.
func (s *State) noteFirstToken(ch Channel, ms int64) {
	if !s.cfg.Hedge.On() {
		return
	}
	r := s.ttft[ch]
	if r == nil {
		if len(s.ttft) >= maxHedgeChannels {
			return
		}
		if s.ttft == nil {
			s.ttft = map[Channel]*ttftRing{}
		}
		r = &ttftRing{}
		s.ttft[s.intern(ch)] = r
	}
	r.add(ms)
}

// hedgeDelay is when a call on ch is hedged, from its start, and why.
func (s *State) hedgeDelay(ch Channel) (int64, string) {
	c := s.cfg.Hedge
	if c.AfterMs > 0 {
		return c.AfterMs, "hedge.afterMs"
	}
	r := s.ttft[ch]
	if r == nil || r.n < hedgeMinSamples {
		n := 0
		if r != nil {
			n = r.n
		}
		return c.MaxMs, fmt.Sprintf("hedge.maxMs: %d of %d first tokens measured", n, hedgeMinSamples)
	}
	d := min(max(r.percentile(c.AfterPercentile), c.MinMs), c.MaxMs)
	return d, "p" + strconv.Itoa(c.AfterPercentile) + " of the last " + strconv.Itoa(r.n) + " first tokens"
}

// hedgeDeadline is when a StreamCheck's call is due for its hedge; 0 when it
// is not a candidate: only an agent's own call, before its first chunk,
// not already hedged.
func (s *State) hedgeDeadline(e StreamCheck) int64 {
	if !s.cfg.Hedge.On() || e.Purpose != "" || e.Agent == "" || e.Chunks > 0 || e.Hedging || e.Cancelled {
		return 0
	}
	d, _ := s.hedgeDelay(e.Channel)
	return e.OpenedMs + d
}

// hedge decides the hedge of a due call: where to, within the budget. It
// changes nothing when there is none.
func (s *State) hedge(now int64, e StreamCheck) (HedgeSend, bool) {
	a := s.agents.lookup(e.Agent)
	if a == nil || !a.inFlight || a.routed != e.Channel || !a.hedge.to.IsZero() {
		return HedgeSend{}, false // not the request this instance routed: nothing to hedge it with
	}
	ps := s.preferences(a, e.Channel)
	to, ok, _, _ := s.walkFast(now, ps, e.Channel, a.spillFrom, true) // routable, fits, not open, not slow
	if !ok {
		return HedgeSend{}, false
	}
	if c := s.circuits[to]; c != nil && c.state != Closed {
		return HedgeSend{}, false // a half-open channel's one call is its probe's
	}
	if !s.provider(e.Channel.Provider).budget.spendHedge(now, &s.cfg.Hedge) {
		return HedgeSend{}, false
	}
	after, reason := s.hedgeDelay(e.Channel)
	h := HedgeSend{To: to, AfterMs: after, Reason: reason}
	if s.stripsEffort(to) {
		h.DropReasoningEffort = e.ReasoningEffort != ""
	} else if effort, ok := s.routeEffort(a, to); ok {
		h.ReasoningEffort = effort
	} else if e.ReasoningEffort != "" && !s.keepsEffort(to, e.ReasoningEffort) {
		h.DropReasoningEffort = true
	}
	a.hedge = hedgeRun{from: e.Channel, to: s.intern(to), afterMs: after, reason: reason, sentMs: now}
	return h, true
}

// onHedgeResult ends an agent's hedge: the slow-call breaker and the learned
// delay hear the calls' times, a won hedge moves the session as a failover
// would (it keeps its home), and the shell audits it.
func (s *State) onHedgeResult(now int64, e HedgeResult, fx *[]Effect) {
	a := s.agents.lookup(e.Agent)
	if a == nil || a.hedge.to.IsZero() {
		return // a restarted instance: the race is not one it decided
	}
	run := a.hedge
	a.hedge = hedgeRun{}
	h := Hedged{Agent: e.Agent, From: run.from, To: run.to, AfterMs: run.afterMs, Reason: run.reason,
		Winner: e.Winner, End: e.End, Code: e.Code, SavedMs: -1}
	age := max(0, now-e.OpenedMs)
	switch e.Winner {
	case WinnerHedge:
		h.FirstTokenMs, h.LoserWaitMs = age, age
		if r := s.ttft[run.from]; r != nil && r.n > 0 {
			h.SavedMs = max(0, r.percentile(50)-age)
		}
		s.onFirstToken(now, run.to, e.FirstTokenMs, fx)
		s.noteFirstToken(run.to, e.FirstTokenMs)
		s.onFirstToken(now, run.from, age, fx) // it was at least this slow
		s.noteFirstToken(run.from, age)
		if a.inFlight && a.routed == run.from {
			a.routed = run.to // its success is the hedge's; the next request returns as recovery says
			a.wonFrom, a.wonTo = run.from, run.to
			s.routeEffect(e.Agent, a, run.to, fx)
		}
	case WinnerPrimary:
		h.FirstTokenMs, h.LoserWaitMs = e.FirstTokenMs, max(0, now-run.sentMs)
		s.onFirstToken(now, run.from, e.FirstTokenMs, fx)
		s.noteFirstToken(run.from, e.FirstTokenMs)
	default:
		h.LoserWaitMs = max(0, now-run.sentMs)
	}
	*fx = append(*fx, h)
}

// spendHedge takes one hedge from the provider's budget if there is one left.
func (b *budget) spendHedge(now int64, c *HedgeConfig) bool {
	b.advance(now)
	req, _ := b.sum()
	n := 0
	for _, h := range b.hedges {
		n += h
	}
	if n >= c.BudgetFloor+req*c.BudgetPercent/100 {
		return false
	}
	b.hedges[b.slot%budgetSlots]++
	return true
}

// hostProposal is what the host's proposal means for this agent: with
// recovery stay, the channel a won hedge moved it to while the host, whose
// header still names the one it left, proposes that one. Any other proposal
// (a pick, a failover's target) ends it.
func (s *State) hostProposal(a *agent, proposed Channel) Channel {
	if a.wonFrom.IsZero() {
		return proposed
	}
	if s.cfg.Recovery == Stay && proposed == a.wonFrom {
		return a.wonTo
	}
	a.wonFrom, a.wonTo = Channel{}, Channel{}
	return proposed
}
