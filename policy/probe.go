package policy

import "sort"

// onWake sends a probe to every opened channel whose time is up and whose
// probe slot is free: the channel is tested with a tiny request of the
// plugin's own instead of a user's turn.
func (s *State) onWake(now int64, fx *[]Effect) {
	if !s.cfg.Probes {
		return
	}
	keys := make([]string, 0, len(s.circuits))
	for k := range s.circuits {
		keys = append(keys, k)
	}
	sort.Strings(keys) // map order must not leak into the output
	for _, k := range keys {
		c := s.circuits[k]
		if c.state == Closed || !c.routable(now) {
			continue
		}
		if p := s.providers[c.channel.Provider]; p != nil && !p.routable(now) {
			continue
		}
		c.admit(now, probeOwner, fx)
		if c.state == HalfOpen {
			*fx = append(*fx, Probe{Channel: c.channel})
		}
	}
}

func (s *State) onProbeResult(now int64, e ProbeResult, fx *[]Effect) {
	c := s.circuits[e.Channel.Key()]
	if c == nil || c.state == Closed {
		return // closed meanwhile by an agent's success
	}
	if e.OK {
		c.succeed(now, fx)
		s.providerSucceeded(now, e.Channel.Provider, fx)
		return
	}
	class := s.cfg.classify(e.Failure)
	if class == ClassPermanent {
		// A probe refused for its own sake (cancelled at shutdown, say) says
		// nothing about the channel: free the slot, let the next wake retry.
		c.release(probeOwner)
		return
	}
	c.countFailure(now, s.cfg.BurstWindowMs, e.Failure.Code)
	retryAfter := max(e.Failure.RetryAfterMs, resetHint(e.Failure.Message, now))
	c.open(now, &s.cfg, retryAfter, e.Failure.Code, class, fx)
	s.checkProvider(now, e.Channel.Provider, fx)
}

// scheduleWake asks for the next time something is due: an opened channel
// coming off its open time, or a probe slot's lease running out.
func (s *State) scheduleWake(now int64, fx *[]Effect) {
	if !s.cfg.Probes {
		return
	}
	var at int64
	for _, c := range s.circuits {
		if c.state == Closed {
			continue
		}
		// The same notion of "routable again" that routing and onWake use, so a
		// wake never finds nothing to do and asks to be woken again at once.
		due := s.reopensAt(now, c.channel)
		if at == 0 || due < at {
			at = due
		}
	}
	if at != 0 && at < now {
		at = now
	}
	if at != s.wakeAt {
		s.wakeAt = at
		*fx = append(*fx, ScheduleWake{AtMs: at})
	}
}
