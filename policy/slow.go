package policy

import (
	"fmt"
	"slices"
)

// The slow-call breaker. A channel that still answers, but takes a minute to
// its first token, is healthy to every failure breaker: each call ends well.
// The stall watchdog only cuts the extreme (DefaultStallFirstChunkMs, three
// minutes). So the time to first token of every agent-loop call is fed back
// (the stall watchdog's own clocks: StreamCheck.FirstTokenMs, no new timer),
// and a channel whose calls were over Slow.FirstTokenMs MinCalls times in a
// row is slow: new sessions and spills prefer a routable channel that is not,
// in the same order; a running session stays (unless MoveRunning), since a
// move costs its prompt cache and a slow answer is still an answer.
//
// It ends by the failure breaker's half-open logic: any fast call closes it
// (a running session's, since those stay); and once the cooldown has passed
// since it turned slow, one new session is let through to it as the probe
// (SlowChanged To SlowHalfOpen). A fast first token closes it; a slow one keeps it
// slow for another cooldown. A probe whose call never reports (the session
// went away) holds the slot at most probeLeaseMs, as the failure breaker's.
//
// Only the agent loop's calls count: compaction prefills a whole window and a
// session title is a tiny call, neither says how fast a turn will start.
//
// Slowness is a local measurement: the snapshot shows it (SlowHealth, for the
// web dock), but it is never persisted nor adopted from another host; a
// restarted host learns it again from MinCalls calls.

// SlowConfig is the row's `slow` object.
type SlowConfig struct {
	// FirstTokenMs: a call slower than this to its first chunk is slow; 0 (the
	// default) turns the breaker off.
	FirstTokenMs int64
	// MinCalls: slow calls in a row that make the channel slow.
	MinCalls int
	// MoveRunning: a running session on a slow channel moves too, at its next
	// request, to a routable channel that is not slow.
	MoveRunning bool
}

const (
	// DefaultSlowMinCalls: one slow call is a long prefill or a long think;
	// three in a row, from any sessions, is the channel.
	DefaultSlowMinCalls = 3
	maxSlowMinCalls     = 1000
	// slowEstimateWeight: each call moves the decayed estimate a quarter of
	// the way, so it follows the last few calls, not the day.
	slowEstimateWeight = 4
)

// DefaultSlowConfig is off: the right bound depends on the model (a reasoning
// model thinking silently for two minutes is not slow), so only the operator
// can name it.
func DefaultSlowConfig() SlowConfig { return SlowConfig{MinCalls: DefaultSlowMinCalls} }

// On reports whether the slow-call breaker runs.
func (c SlowConfig) On() bool { return c.FirstTokenMs > 0 }

func (c SlowConfig) validate() error {
	if c.FirstTokenMs != 0 && (c.FirstTokenMs < minStallMs || c.FirstTokenMs > maxStallMs) {
		return &FieldError{"slow.firstTokenMs", "must be 0 (off) or between 100 and 86400000 (one day)"}
	}
	if c.MinCalls < 1 || c.MinCalls > maxSlowMinCalls {
		return &FieldError{"slow.minCalls", fmt.Sprintf("must be between 1 and %d", maxSlowMinCalls)}
	}
	return nil
}

// SlowState is where a channel's slow-call breaker is.
type SlowState string

const (
	// NotSlow: the channel's first tokens come in time (the breaker is closed).
	NotSlow SlowState = "closed"
	// Slow: MinCalls calls in a row were slow; new sessions and spills avoid it.
	Slow SlowState = "slow"
	// SlowHalfOpen: the cooldown is up and one new session was let through as the probe.
	SlowHalfOpen SlowState = "half-open"
)

// SlowChanged reports every transition of a channel's slow-call breaker: the
// shim audits `slow`, `slow-probe` or `slow-closed` and emits dsh-resilience/slow.
type SlowChanged struct {
	Channel  Channel
	From, To SlowState
	// Agent: the probe's session, let through (To SlowHalfOpen) or gone
	// before its first token (From SlowHalfOpen To Slow); "" when a call decided it.
	Agent string
	// FirstTokenMs: the call that decided it (when Agent is "").
	FirstTokenMs int64
	// EstimateMs: the decayed estimate of the channel's time to first token.
	EstimateMs int64
	LimitMs    int64
	// Calls: slow calls in a row so far.
	Calls int
}

func (SlowChanged) isEffect() {}

var _ Effect = SlowChanged{}

// slowness is a channel's slow-call breaker, kept on its circuit.
type slowness struct {
	state      SlowState // "" is NotSlow
	estimateMs int64     // decayed time to first token; 0 before the first call
	streak     int       // slow calls in a row
	untilMs    int64     // while slow: when one new session may probe it
	probeAgent string    // the session holding the probe slot, "" when free
	probeSince int64
}

// SlowHealth is one measured channel's slow-call breaker, for display: the
// snapshot's `slow` list beside the breakers, never persisted nor merged.
type SlowHealth struct {
	Channel Channel
	State   SlowState
	// FirstTokenMs is the decayed estimate of the channel's time to first token.
	FirstTokenMs int64
	// UntilMs: while slow, when a new session may probe it.
	UntilMs int64
}

// SlowHealth lists every channel the slow-call breaker measured, sorted.
func (s *State) SlowHealth() []SlowHealth {
	var out []SlowHealth
	for _, c := range s.circuits {
		if w := &c.slow; w.estimateMs > 0 || w.slow() {
			st := w.state
			if st == "" {
				st = NotSlow
			}
			h := SlowHealth{Channel: c.channel, State: st, FirstTokenMs: w.estimateMs}
			if w.slow() {
				h.UntilMs = w.untilMs
			}
			out = append(out, h)
		}
	}
	slices.SortFunc(out, func(a, b SlowHealth) int { return a.Channel.compare(b.Channel) })
	return out
}

func (w *slowness) slow() bool { return w.state == Slow || w.state == SlowHalfOpen }

// avoided reports whether a new session must look elsewhere first: slow, and
// not due for its probe (or the probe slot is taken).
func (w *slowness) avoided(now int64) bool {
	if !w.slow() {
		return false
	}
	if now < w.untilMs {
		return true
	}
	return w.probeAgent != "" && now-w.probeSince < probeLeaseMs
}

// slowAvoided is avoided for ch; false when the breaker is off or ch was never measured.
func (s *State) slowAvoided(now int64, ch Channel) bool {
	if s.slowCount == 0 {
		return false
	}
	c := s.circuits[ch]
	return c != nil && c.slow.avoided(now)
}

// slowAvoidedInChain is slowAvoided for the chain's entry i, by its index.
func (s *State) slowAvoidedInChain(now int64, i int) bool {
	c := s.chain.circ[i]
	return c != nil && c.slow.avoided(now)
}

// slowLimit is ch's slow-call threshold: its own (a chain or pool entry's
// slowFirstTokenMs, targets.go), else the row's slow.firstTokenMs; 0: off for it.
// A flagship behind a gateway and a small fast model are not slow at the same time.
func (s *State) slowLimit(ch Channel) int64 {
	if t := s.cfg.SlowFirstTokenMs(ch); t > 0 {
		return t
	}
	return s.cfg.Slow.FirstTokenMs
}

// slowWatched says whether any channel has a slow-call threshold: the stall
// watchdog then reports every agent call's first chunk (stall.go).
func (c *Config) slowWatched() bool {
	if c.Slow.On() {
		return true
	}
	for _, t := range c.Targets {
		if t.SlowFirstTokenMs > 0 {
			return true
		}
	}
	return false
}

// onFirstToken feeds one call's time to first token to its channel's breaker.
func (s *State) onFirstToken(now int64, ch Channel, ms int64, fx *[]Effect) {
	cfg := s.cfg.Slow
	limit := s.slowLimit(ch)
	if limit <= 0 || ch.Provider == "" || ch.Model == "" {
		return
	}
	c := s.circuit(ch)
	w := &c.slow
	if w.estimateMs == 0 {
		w.estimateMs = ms
	} else {
		w.estimateMs += (ms - w.estimateMs) / slowEstimateWeight
	}
	from := w.state
	if from == "" {
		from = NotSlow
	}
	change := SlowChanged{Channel: c.channel, From: from, FirstTokenMs: ms, LimitMs: limit}
	if ms <= limit {
		w.streak = 0
		if w.slow() { // a fast call closes it, whoever made it
			w.state, w.probeAgent = NotSlow, ""
			s.slowCount--
			change.To, change.EstimateMs = NotSlow, w.estimateMs
			*fx = append(*fx, change)
		}
		return
	}
	w.streak++
	switch {
	case w.slow() && now >= w.untilMs:
		// The probe (or a running session's call after the cooldown) was slow
		// too: slow for another cooldown, the slot free again.
		w.untilMs, w.probeAgent = now+s.cfg.CooldownMs, ""
		if w.state == SlowHalfOpen {
			w.state = Slow
			change.To, change.EstimateMs, change.Calls = Slow, w.estimateMs, w.streak
			*fx = append(*fx, change)
		}
	case !w.slow() && w.streak >= cfg.MinCalls:
		w.state, w.untilMs, w.probeAgent = Slow, now+s.cfg.CooldownMs, ""
		s.slowCount++
		change.To, change.EstimateMs, change.Calls = Slow, w.estimateMs, w.streak
		*fx = append(*fx, change)
	}
}

// preferFast is where a new session (or a spill, or with MoveRunning a
// running session) goes instead of target when target is slow: the first
// preference in the same order that is routable and not slow, or a slow one
// due for its probe. It returns target when there is none: a slow answer is
// better than none.
func (s *State) preferFast(now int64, ps prefs, target, avoid, also Channel) Channel {
	if !s.slowAvoided(now, target) {
		return target
	}
	if to, ok, _, _ := s.walkFast(now, ps, avoid, also, true); ok {
		return to
	}
	return target
}

// releaseSlowProbe frees the slow probe slot when its session goes away
// before its first token said anything: slow again, and due, so the next new
// session probes instead of waiting out the lease.
func (s *State) releaseSlowProbe(c *circuit, agent string, fx *[]Effect) {
	w := &c.slow
	if w.state != SlowHalfOpen || w.probeAgent != agent {
		return
	}
	w.state, w.probeAgent = Slow, ""
	*fx = append(*fx, SlowChanged{Channel: c.channel, From: SlowHalfOpen, To: Slow, Agent: agent,
		EstimateMs: w.estimateMs, LimitMs: s.slowLimit(c.channel), Calls: w.streak})
}

// admitSlowProbe takes the probe slot of a slow channel due for one, when a
// new session is routed to it.
func (s *State) admitSlowProbe(now int64, agent string, ch Channel, fx *[]Effect) {
	if s.slowCount == 0 {
		return
	}
	c := s.circuits[ch]
	if c == nil || !c.slow.slow() || c.slow.avoided(now) {
		return
	}
	w := &c.slow
	from := w.state
	w.state, w.probeAgent, w.probeSince = SlowHalfOpen, agent, now
	*fx = append(*fx, SlowChanged{Channel: c.channel, From: from, To: SlowHalfOpen, Agent: agent,
		EstimateMs: w.estimateMs, LimitMs: s.slowLimit(c.channel), Calls: w.streak})
}
