package report

import "strings"

// Window is the span a report covers. A bound left out is the logs' first
// (or last) record. Records outside it still count for the state they leave
// (an outage that began before it); only what overlaps it is reported.
type Window struct {
	FromMs, ToMs   int64
	HasFrom, HasTo bool
}

// Accumulator folds the records of one report as they are read. Begin one
// with New, Feed it every log's lines (in the order Need asks), then Finish.
type Accumulator struct {
	window  Window
	queues  []queue
	records int // records folded
	skipped int // lines and records that could not be used
	minT    int64
	maxT    int64

	channels map[string]*channelNumbers
	overflow channelNumbers // the sink for channels past maxChannels
	breakers breakers
	streams  streams
	agents   map[string]*agent
	// pending holds each channel's failed attempts since its last success:
	// the onset of an outage, counted into its incident when it opens.
	pending   map[string]*failures
	incidents []*incident
	giveUps   []GiveUp
	giveUpsIn int // give-ups in the window, listed or not
	// hedges in the window; those the hedge won, and the time they saved
	hedges, hedgesWon int
	hedgeSavedMs      float64
	probes            []Probe
}

// New begins a report over logs logs (at least one).
func New(w Window, logs int) *Accumulator {
	return &Accumulator{
		window:   w,
		queues:   make([]queue, max(logs, 1)),
		channels: map[string]*channelNumbers{},
		breakers: newBreakers(),
		streams:  newStreams(),
		agents:   map[string]*agent{},
		pending:  map[string]*failures{},
	}
}

// Counts is how far a report has read.
func (a *Accumulator) Counts() (records, skipped int) { return a.records, a.skipped }

// inWindow reports whether a time is inside the window's given bounds (a
// bound not given is the logs' first or last record, which holds every
// record's time).
func (a *Accumulator) inWindow(t int64) bool {
	return (!a.window.HasFrom || t >= a.window.FromMs) && (!a.window.HasTo || t <= a.window.ToMs)
}

// endsBefore reports whether something that ended at t is wholly before the
// window: it is never shown, so it need not be kept.
func (a *Accumulator) endsBefore(t int64) bool { return a.window.HasFrom && t < a.window.FromMs }

// providerOf is the provider part of a channel key, cut at its first "/"
// (providers name no slash; models may).
func providerOf(key string) string {
	if i := strings.IndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	// No slash: a key from a record's bare text, cut as the shim always cut it.
	if key == "" {
		return ""
	}
	return key[:len(key)-1]
}

// fold takes one record into the report, in merged time order.
func (a *Accumulator) fold(log int, r *record) {
	if a.records == 0 || r.t < a.minT {
		a.minT = r.t
	}
	if a.records == 0 || r.t > a.maxT {
		a.maxT = r.t
	}
	a.records++
	switch r.kind {
	case kindCircuit:
		a.setState(log, r.channel.v, r.state, transition{adopted: r.adopted, seen: r.state == "open",
			cause: r.cause.v, class: r.class.v, hasCause: r.cause.ok, hasClass: r.class.ok}, r.t)
	case kindRestore:
		// A host that adopts another's (or its last run's) open breaker says so
		// only here: an outage whose opening this log never saw starts, for the
		// report, at the adoption.
		for _, h := range r.adoptions {
			if a.breakers.worstOf(h.channel) == closed {
				a.setState(log, h.channel, h.state, transition{adopted: true, cause: h.lastCode, hasCause: true, class: "?", hasClass: true}, r.t)
			}
		}
	case kindFailover:
		a.failover(r)
	case kindStall:
		if inc := a.incidentFor(r.channel.v); inc != nil {
			inc.hung = true
		}
	case kindHedge:
		if a.inWindow(r.t) {
			a.hedges++
			if r.winner.v == "hedge" {
				a.hedgesWon++
				a.hedgeSavedMs += max(0, r.savedMs.v)
			}
		}
	case kindProbeResult:
		if a.inWindow(r.t) && len(a.probes) < maxListed {
			a.probes = append(a.probes, Probe{At: r.t, Channel: r.channel.v, OK: r.ok, Code: ptr(r.code)})
		}
		if inc := a.incidentFor(r.channel.v); inc != nil && !r.ok {
			inc.failedProbes++
		}
	case kindGiveUp:
		a.giveUp(r)
	case kindRequest:
		a.request(r)
	case kindColdPass:
		if ag := a.agents[r.agent.v]; ag != nil && ag.cur != nil {
			// Its stream opened when it went, before the module was told of it.
			ag.cur.cold = true
			if r.sentMs.ok {
				ag.cur.at = min(ag.cur.at, r.sentMs.v)
			}
		}
	case kindStreamCheck:
		a.streamCheck(log, r)
	case kindRequestError:
		a.requestError(log, r)
	case kindSettled:
		a.settled(r)
	case kindDisposed:
		delete(a.agents, r.agent.v)
	}
}

func ptr[T any](o opt[T]) *T {
	if !o.ok {
		return nil
	}
	return &o.v
}

// channelOf is a channel's numbers, begun at its first mention.
func (a *Accumulator) channelOf(key string) *channelNumbers {
	if c, ok := a.channels[key]; ok {
		return c
	}
	if len(a.channels) >= maxChannels {
		a.overflow = channelNumbers{key: key}
		return &a.overflow
	}
	c := &channelNumbers{key: key, provider: providerOf(key)}
	if i := strings.IndexByte(key, '/'); i >= 0 {
		c.model = key[i+1:]
	} else {
		c.model = key
	}
	a.channels[key] = c
	return c
}
