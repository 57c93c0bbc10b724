package policy

import "fmt"

// Step advances the state by one event at time now (ms since the epoch) and
// returns the verdict for the host plus the effects for the shell, in order.
// The state is updated in place; the same state, time and event always give
// the same output.
func Step(s *State, now int64, ev Event) Output {
	var fx []Effect
	var v Verdict
	switch e := ev.(type) {
	case Request:
		v = s.onRequest(now, e, &fx)
	case RequestError:
		v = s.onRequestError(now, e, &fx)
	case Settled:
		s.settle(s.agent(e.Agent, now), &fx)
		delete(s.agents, e.Agent)
		v = Verdict{Kind: Pass}
	case Disposed:
		if a := s.agents[e.Agent]; a != nil {
			if c := s.circuits[a.last.Key()]; c != nil {
				c.release(e.Agent)
			}
			delete(s.agents, e.Agent)
		}
		v = Verdict{Kind: Pass}
	default:
		panic(fmt.Sprintf("policy: unknown event %T", ev))
	}
	return Output{Verdict: v, Effects: fx}
}

// settle credits the agent's last request with a success, if it had one in flight.
func (s *State) settle(a *agent, fx *[]Effect) {
	if a.inFlight {
		s.circuit(a.last).succeed(fx)
		a.inFlight = false
		a.failovers, a.attempts = 0, 0
	}
}

// candidates is the routing preference: what the host proposed, then the chain.
func (s *State) candidates(proposed Channel) []Channel {
	return append([]Channel{proposed}, s.cfg.Chain...)
}

// firstRoutable returns the first candidate that could take a request now,
// skipping avoid. It changes nothing.
func (s *State) firstRoutable(now int64, cands []Channel, avoid Channel) (Channel, bool) {
	for _, ch := range cands {
		if ch != avoid && !ch.IsZero() && s.peek(ch).routable(now) {
			return ch, true
		}
	}
	return Channel{}, false
}

func (s *State) onRequest(now int64, e Request, fx *[]Effect) Verdict {
	a := s.agent(e.Agent, now)
	// A new request while the last one is still in flight means it went through.
	s.settle(a, fx)
	target, ok := s.firstRoutable(now, s.candidates(e.Proposed), Channel{})
	if !ok {
		// Nothing is routable: let the proposed channel try rather than invent one.
		target = e.Proposed
	}
	if c := s.circuits[target.Key()]; c != nil { // an unseen channel is closed: nothing to admit
		c.admit(now, e.Agent, fx)
	}
	a.last, a.inFlight = target, true
	if target == e.Proposed {
		return Verdict{Kind: Pass}
	}
	return Verdict{Kind: Swap, Channel: target}
}

func (s *State) onRequestError(now int64, e RequestError, fx *[]Effect) Verdict {
	a := s.agent(e.Agent, now)
	ch := a.last
	a.inFlight = false
	if ch.IsZero() || ch.Provider != e.Provider {
		// This state did not route the request, so it cannot say which channel
		// failed; a breaker keyed by guesswork would route nothing. The host's
		// own retry plugin gets the failure, and then the host decides.
		if e.Phase == BeforeHost {
			return Verdict{Kind: Defer}
		}
		*fx = append(*fx, GaveUp{Agent: e.Agent, Channel: Channel{Provider: e.Provider}, Reason: UnknownChannel, Code: e.Failure.Code})
		return Verdict{Kind: Delegate, Reason: UnknownChannel}
	}
	class := Classify(e.Failure)
	c := s.circuits[ch.Key()] // nil: never failed, closed; created once there is something to record
	if c != nil {
		c.ready(now, fx)
	}
	closed := c == nil || c.state == Closed

	if e.Phase == BeforeHost && class != ClassQuota && class != ClassModelUnavailable && closed {
		// The host's retry plugin owns ordinary transient retries.
		return Verdict{Kind: Defer}
	}
	if class == ClassPermanent {
		if c != nil {
			c.release(e.Agent) // a cancelled probe says nothing about the channel
		}
		*fx = append(*fx, GaveUp{Agent: e.Agent, Channel: ch, Reason: NotRecoverable, Code: e.Failure.Code})
		return Verdict{Kind: Delegate, Reason: NotRecoverable}
	}

	c = s.circuit(ch)
	c.failures++
	c.lastCode = e.Failure.Code
	hostSpent := e.Phase == AfterHost && e.HostRetry.covers(e.Failure.Code)
	switch {
	case class == ClassQuota || class == ClassModelUnavailable:
		c.open(now, s.cfg.CooldownMs, e.Failure.RetryAfterMs, e.Failure.Code, class, fx)
	case c.state != Closed, hostSpent, c.failures >= s.cfg.FailureThreshold:
		// A failed probe, the host's budget spent, or a persistent run of failures.
		c.open(now, s.cfg.CooldownMs, e.Failure.RetryAfterMs, e.Failure.Code, class, fx)
	default:
		a.attempts++
		d := Backoff(a.attempts, s.cfg.BackoffBaseMs, s.cfg.BackoffMaxMs, e.Failure.RetryAfterMs, e.Rand)
		*fx = append(*fx, Retrying{Agent: e.Agent, Channel: ch, Attempt: a.attempts, DelayMs: d, Code: e.Failure.Code})
		return Verdict{Kind: Wait, DelayMs: d}
	}

	to, ok := s.firstRoutable(now, s.candidates(ch), ch)
	reason := NoRoutableFallback
	if ok && a.failovers >= s.cfg.MaxFailovers {
		ok, reason = false, BudgetExhausted
	}
	if !ok {
		*fx = append(*fx, GaveUp{Agent: e.Agent, Channel: ch, Reason: reason, Code: e.Failure.Code})
		return Verdict{Kind: Delegate, Reason: reason}
	}
	a.failovers++
	a.attempts = 0
	*fx = append(*fx, FailedOver{Agent: e.Agent, From: ch, To: to, Code: e.Failure.Code, Class: class})
	return Verdict{Kind: Retry}
}
