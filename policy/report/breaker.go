package report

import "slices"

// Breakers across hosts. Each host's log says when its own breaker of a
// channel moved; the channel's state for the report is the worst over the
// hosts (open over half-open over closed), and an incident is one span of
// that state away from closed: two hosts' overlapping opens are one outage.

const (
	closed   = "closed"
	open     = "open"
	halfOpen = "half-open"
)

// hostKey is one host's (log's) breaker of one channel.
type hostKey struct {
	log int
	key string
}

type breakers struct {
	states map[string]map[int]string // channel -> log -> its breaker's state there
	// adopted: a host's state learnt from health, not seen happen. A close
	// seen happen ends them: a host whose adopted breaker is later merged
	// closed writes no record of it.
	adopted map[string]map[int]bool
	worst   map[string]string    // channel -> its state over all hosts (absent: closed)
	current map[string]*incident // channel -> its incident while not closed
}

func newBreakers() breakers {
	return breakers{states: map[string]map[int]string{}, adopted: map[string]map[int]bool{},
		worst: map[string]string{}, current: map[string]*incident{}}
}

func (b *breakers) worstOf(key string) string {
	if w, ok := b.worst[key]; ok {
		return w
	}
	return closed
}

// transition is what moved a breaker: a record of the move, or an adoption.
type transition struct {
	adopted, seen      bool // seen: the opening itself is in the log
	cause, class       string
	hasCause, hasClass bool
}

// setState moves one host's breaker of a channel, and the channel's with it.
func (a *Accumulator) setState(log int, key, state string, tr transition, t int64) {
	b := &a.breakers
	hosts := b.states[key]
	if hosts == nil {
		hosts = map[int]string{}
		b.states[key] = hosts
	}
	hosts[log] = state
	if tr.adopted {
		if b.adopted[key] == nil {
			b.adopted[key] = map[int]bool{}
		}
		b.adopted[key][log] = true
	} else {
		delete(b.adopted[key], log) // its own transitions from here on
		if state == closed {
			for other := range b.adopted[key] {
				hosts[other] = closed
			}
			delete(b.adopted, key)
		}
	}
	w := closed
	for _, s := range hosts {
		if s == open {
			w = open
		} else if s == halfOpen && w == closed {
			w = halfOpen
		}
	}
	was := b.worstOf(key)
	if w == was {
		return
	}
	b.worst[key] = w
	c := a.channelOf(key)
	if n := len(c.spans); n > 0 && c.spans[n-1].open {
		c.spans[n-1].end, c.spans[n-1].open = t, false
		if a.endsBefore(t) { // wholly before the window: never shown, never counted
			c.spans = c.spans[:n-1]
		}
	}
	if w != closed && len(c.spans) < maxListed {
		c.spans = append(c.spans, span{state: w, start: t, open: true})
	}
	switch {
	case was == closed:
		inc := &incident{channel: key, start: t, startKnown: tr.seen, cause: "?", class: "?"}
		if tr.hasCause {
			inc.cause = tr.cause
		}
		if tr.hasClass {
			inc.class = tr.class
		}
		if p := a.pending[key]; p != nil {
			a.onset(inc, p)
			delete(a.pending, key)
		}
		b.current[key] = inc
		if len(a.incidents) == maxListed {
			a.incidents = slices.DeleteFunc(a.incidents, func(x *incident) bool { return x.ended && a.endsBefore(x.end) })
		}
		if len(a.incidents) < maxListed {
			a.incidents = append(a.incidents, inc)
		}
	case w == closed:
		inc := b.current[key]
		inc.end, inc.ended = t, true
		delete(b.current, key)
	}
}

// incidentFor is the incident a channel is in: its own, or its provider breaker's.
func (a *Accumulator) incidentFor(key string) *incident {
	if inc := a.breakers.current[key]; inc != nil {
		return inc
	}
	return a.breakers.current[providerOf(key)+"/*"]
}
