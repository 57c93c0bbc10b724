package policy

// CircuitState is a channel breaker's state.
type CircuitState string

const (
	// Closed: the channel takes traffic; failures are counted.
	Closed CircuitState = "closed"
	// Open: the channel is avoided until OpenUntilMs.
	Open CircuitState = "open"
	// HalfOpen: the cooldown has passed and exactly one request is admitted as a
	// probe; its success closes the channel, its failure re-opens it.
	HalfOpen CircuitState = "half-open"
)

// probeLeaseMs bounds how long one half-open probe holds the channel's only
// slot. A probe normally ends in a success or a failure; one whose agent
// vanishes without either (evicted, or its host died) must not keep the
// channel half-open for ever. Ten minutes outlasts the adapters' own stream
// idle timeout (300 s by default).
const probeLeaseMs = 10 * 60_000

// circuit is one channel's breaker. Every transition goes through transition,
// which emits the CircuitChanged effect, so no state change goes unreported.
type circuit struct {
	channel     Channel
	state       CircuitState
	failures    int   // consecutive failures counted by the plugin
	openUntilMs int64 // while Open
	lastCode    string
	// probeAgent holds the HalfOpen slot since probeSinceMs; "" when free.
	probeAgent   string
	probeSinceMs int64
}

func (c *circuit) transition(to CircuitState, cause string, class Class, fx *[]Effect) {
	from := c.state
	c.state = to
	c.probeAgent = ""
	ev := CircuitChanged{Channel: c.channel, From: from, To: to, Cause: cause, Class: class}
	if to == Open {
		ev.OpenUntilMs = c.openUntilMs
	}
	if to == Closed {
		c.failures = 0
	}
	*fx = append(*fx, ev)
}

// ready moves an Open circuit whose time is up to HalfOpen.
func (c *circuit) ready(now int64, fx *[]Effect) {
	if c.state == Open && now >= c.openUntilMs {
		c.transition(HalfOpen, "cooled-down", "", fx)
	}
}

// routable reports, without changing anything, whether a request could go to
// the channel now: closed, or due for its one half-open probe.
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

// admit routes one of agent's requests to the channel, taking the half-open
// probe slot when that is what lets it through. The caller checked routable.
func (c *circuit) admit(now int64, agent string, fx *[]Effect) {
	c.ready(now, fx)
	if c.state == HalfOpen {
		c.probeAgent, c.probeSinceMs = agent, now
	}
}

// release frees the probe slot if agent holds it: its probe ended without
// telling anything about the channel (cancelled, or the agent went away).
func (c *circuit) release(agent string) {
	if c.probeAgent == agent {
		c.probeAgent = ""
	}
}

// open opens (or re-opens, extending) the breaker for at least cooldownMs,
// longer when the provider said when it will take requests again.
func (c *circuit) open(now, cooldownMs, retryAfterMs int64, cause string, class Class, fx *[]Effect) {
	until := now + cooldownMs
	if r := now + retryAfterMs; r > until {
		until = r
	}
	if c.state == Open && c.openUntilMs >= until {
		return
	}
	c.openUntilMs = until
	c.transition(Open, cause, class, fx)
}

// succeed closes the breaker after a request on it went through.
func (c *circuit) succeed(fx *[]Effect) {
	if c.state != Closed {
		c.transition(Closed, "recovered", "", fx)
		return
	}
	c.failures = 0
}
