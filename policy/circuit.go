package policy

// CircuitState is a breaker's state.
type CircuitState string

const (
	// Closed: the channel takes traffic; failures are counted.
	Closed CircuitState = "closed"
	// Open: the channel is avoided until OpenUntilMs.
	Open CircuitState = "open"
	// HalfOpen: the open time is up and exactly one request is admitted as a
	// probe; its success closes the channel, its failure re-opens it.
	HalfOpen CircuitState = "half-open"
)

// probeLeaseMs bounds how long one half-open probe holds the channel's only
// slot. A probe normally ends in a success or a failure; one whose agent
// vanishes without either (evicted, or its host died) must not keep the
// channel half-open for ever. Ten minutes outlasts the adapters' own stream
// idle timeout (300 s by default).
const probeLeaseMs = 10 * 60_000

// probeOwner is the probe slot's owner for the plugin's own probe calls.
const probeOwner = "\x00probe"

// circuit is one breaker: a channel's, or a provider's (Channel.Model == "*").
// Every transition goes through transition, which emits CircuitChanged, so no
// state change goes unreported.
type circuit struct {
	// The fields are in the order a failure reads them. Opening a provider's
	// breaker asks each of its channel breakers whether it is down and when
	// it is due (checkProvider, chainIndex.refresh, wakeIndex.file), and at
	// 10^4 agents none of them is in the cache: what those questions read
	// sits in the first line, what re-filing a breaker reads in the second,
	// its names and record times after.
	state CircuitState
	// openUntilMs: while Open. probeAgent holds the HalfOpen slot since
	// probeSinceMs; "" when free.
	openUntilMs  int64
	probeSinceMs int64
	probeAgent   string
	// parent is a channel breaker's provider breaker; nil on a provider
	// breaker (isProvider).
	parent *circuit
	heapAt int // position in wakes; -1 when not filed

	// What a change re-files (changed): its place in the wake index and its
	// chain entries. wakes is the wake index it is filed in (nil: a channel
	// breaker with probes off); chain the chain index to keep up to date
	// (nil: a channel breaker not in the chain): a channel breaker's entry
	// (chainAt), or a provider breaker's channels' entries (chainKids, maybe
	// none).
	dueMs   int64 // when filed: when it next lets a request through
	wakes   *wakeIndex
	chain   *chainIndex
	chainAt int

	failures      int   // failures counted in the current burst
	lastFailureMs int64 // for the burst window
	opens         int   // consecutive opens without a close: the cooldown doubles with each
	// version orders the breaker's transitions across hosts sharing health:
	// each transition makes it one more than the highest this breaker has
	// seen, own or adopted (a Lamport clock per record; merge.go).
	version     uint64
	changedAtMs int64 // last transition, or when a remote one was adopted: local time
	// recordedAtMs is the change time its health record carries: changedAtMs,
	// except for an open adopted as written from a writer ahead within the
	// skew, whose own change time is passed on (merge.go, adopt).
	recordedAtMs int64
	lastCode     string
	channel      Channel
	// markedAtMs, on a provider breaker, is when a quota failure last marked
	// the provider exhausted (0: no mark). The breaker's open time is the
	// mark's end. Kept here, not beside the breaker, so the mark travels in
	// the provider's health record (file and Redis) with its version, and a
	// restarted or second host learns it as it learns the breaker.
	markedAtMs int64
	kids       []*circuit // a provider breaker's channel breakers, re-filed when it changes
	chainKids  []int
	// lastOpened, on a provider breaker, is its channel breaker this
	// instance saw open last: the one its own opening names (trippedBy).
	lastOpened *circuit

	// slow is the channel's slow-call breaker (slow.go): apart from the
	// failure breaker, since a slow channel still answers.
	slow slowness
}

// isProvider reports whether this is a provider's breaker: only those have
// no parent. It spares the hot paths reading the channel's name (another
// line, and the name's bytes).
func (c *circuit) isProvider() bool { return c.parent == nil }

// ownDue is when the breaker itself next lets a request through, ignoring its
// provider; 0 when it does now or whenever its slot is free.
func (c *circuit) ownDue() int64 {
	switch {
	case c.state == Open:
		return c.openUntilMs
	case c.state == HalfOpen && c.probeAgent != "":
		return c.probeSinceMs + probeLeaseMs
	}
	return 0
}

// changed brings what depends on the breaker up to date: its chain entries'
// due times (chainindex.go), and in the wake index itself and, for a provider
// breaker, every channel under it. A channel breaker with no wake index
// (probes off) has nothing to file there.
func (c *circuit) changed() {
	if c.chain != nil {
		if c.isProvider() {
			for _, i := range c.chainKids {
				c.chain.refresh(i)
			}
		} else {
			c.chain.refresh(c.chainAt)
		}
	}
	if c.wakes == nil {
		return
	}
	c.wakes.file(c)
	if c.isProvider() {
		for _, k := range c.kids {
			if k.wakes != nil {
				k.wakes.file(k)
			}
		}
	}
}

// providerModel marks a provider-level breaker in its Channel.
const providerModel = "*"

func (c *circuit) transition(now int64, to CircuitState, cause string, class Class, fx *[]Effect) {
	from := c.state
	c.state = to
	c.probeAgent = ""
	c.changedAtMs, c.recordedAtMs = now, now
	c.version++
	ev := CircuitChanged{Channel: c.channel, From: from, To: to, Cause: cause, Class: class}
	if to == Open {
		ev.OpenUntilMs = c.openUntilMs
		if c.isProvider() {
			ev.TrippedBy = c.trippedBy(now)
		} else {
			c.parent.lastOpened = c
		}
	}
	if to == Closed {
		c.failures, c.opens = 0, 0
	}
	if to != Open {
		// A provider's exhaustion mark ends with the open it set: left
		// behind, it would make a later open for another reason (its
		// models down) read as a mark, lifted by a balance reading
		// (seed 16), and keep the provider in the quota report for ever.
		c.markedAtMs = 0
	}
	c.changed()
	*fx = append(*fx, ev)
}

// trippedBy names, for a provider breaker, the model under it that went down
// last: the channel breaker this instance saw open last, while it is still
// down (open, or holding a probe: as checkProvider counts them); "" when it
// is not, or none opened here (the provider's balance, or health adopted
// from another host, opened it).
func (c *circuit) trippedBy(now int64) string {
	if k := c.lastOpened; k != nil && k.state != Closed && !k.routable(now) {
		return k.channel.Model
	}
	return ""
}

// ready moves an Open circuit whose time is up to HalfOpen.
func (c *circuit) ready(now int64, fx *[]Effect) {
	if c.state == Open && now >= c.openUntilMs {
		c.transition(now, HalfOpen, "cooled-down", "", fx)
	}
}

// routable reports, without changing anything, whether a request could go
// through this breaker now: closed, or due for its one half-open probe.
func (c *circuit) routable(now int64) bool {
	switch c.state {
	case Closed:
		return true
	case Open:
		return now >= c.openUntilMs
	default:
		return c.probeAgent == "" || now-c.probeSinceMs >= probeLeaseMs
	}
}

// reopensAt is when the breaker will next let a request through.
func (c *circuit) reopensAt(now int64) int64 {
	switch {
	case c.routable(now):
		return now
	case c.state == Open:
		return c.openUntilMs
	default:
		return c.probeSinceMs + probeLeaseMs
	}
}

// admit routes one of agent's requests through the breaker, taking the
// half-open probe slot when that is what lets it through. The caller checked routable.
func (c *circuit) admit(now int64, agent string, fx *[]Effect) {
	c.ready(now, fx)
	if c.state == HalfOpen {
		c.probeAgent, c.probeSinceMs = agent, now
		c.changed()
	}
}

// release frees the probe slot if agent holds it: its probe ended without
// telling anything about the channel (cancelled, or the agent went away).
func (c *circuit) release(agent string) {
	if c.probeAgent == agent {
		c.probeAgent = ""
		c.changed()
	}
}

// countFailure adds a failure to the current burst, starting a new burst when
// the last failure is older than the window.
func (c *circuit) countFailure(now, burstWindowMs int64, code string) {
	if c.failures > 0 && now-c.lastFailureMs > burstWindowMs {
		c.failures = 0
	}
	c.failures++
	c.lastFailureMs = now
	c.lastCode = code
}

// open opens (or re-opens, extending) the breaker. The open time is the
// cooldown, doubled for each re-open since the last close and capped, or what
// the provider asked for (Retry-After), whichever is longer.
func (c *circuit) open(now int64, cfg *Config, retryAfterMs int64, cause string, class Class, fx *[]Effect) {
	if c.state == Open && now < c.openUntilMs && retryAfterMs <= c.openUntilMs-now {
		return // already open for at least as long: nothing new to say
	}
	cool := cfg.cooldown(c.channel) // a provider breaker's is the row's
	for i := 0; i < c.opens && cool < cfg.MaxCooldownMs; i++ {
		cool *= 2
	}
	cool = min(cool, cfg.MaxCooldownMs)
	c.opens++
	c.openUntilMs = now + max(cool, retryAfterMs)
	c.transition(now, Open, cause, class, fx)
}

// succeed closes the breaker after a request through it went well.
func (c *circuit) succeed(now int64, fx *[]Effect) {
	if c.state != Closed {
		c.transition(now, Closed, "recovered", "", fx)
		return
	}
	c.failures = 0
}
