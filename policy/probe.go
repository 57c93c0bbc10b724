package policy

import "slices"

// onWake ends the open time of every provider breaker whose time is up, and
// sends a probe to every opened channel whose time is up and whose probe slot
// is free: the channel is tested with a tiny request of the plugin's own
// instead of a user's turn. Only the breakers that are due are visited
// (wake.go); with probes off only provider breakers are ever filed.
func (s *State) onWake(now int64, fx *[]Effect) {
	// A wake is the shell's timer firing: no timer is pending any more, so the
	// next one must be asked for even when its time is the one already asked
	// for. A timer can fire a millisecond early (the real host did: the wake
	// came 1 ms before a provider's open time ended, found nothing due, and
	// asked for nothing, so the provider stayed open until some other event
	// happened to wake it, 2.8 s later).
	s.wakeAt = 0
	s.due = s.wakes.popDue(now, s.due[:0])
	// Map and heap order must not leak into the output. Providers go first:
	// ending one re-files its channels, which may then be due with it.
	slices.SortFunc(s.due, func(a, b *circuit) int {
		if pa, pb := a.channel.Model == providerModel, b.channel.Model == providerModel; pa != pb {
			if pa {
				return -1
			}
			return 1
		}
		return a.channel.compare(b.channel)
	})
	for i, c := range s.due {
		s.due[i] = nil
		if c.channel.Model == providerModel {
			c.ready(now, fx) // half-open: out of the index, its channels re-filed
			continue
		}
		c.wakes.file(c) // back in the index: admitting re-files it, not admitting leaves it due
		c.admit(now, probeOwner, fx)
		if c.state == HalfOpen {
			*fx = append(*fx, Probe{Channel: c.channel})
		}
	}
}

func (s *State) onProbeResult(now int64, e ProbeResult, fx *[]Effect) {
	c := s.circuits[e.Channel]
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
	c.open(now, &s.cfg, statedWaitMs(e.Failure, now), e.Failure.Code, class, fx)
	s.checkProvider(now, s.provider(e.Channel.Provider), fx)
}

// scheduleWake asks for the next time something is due: an opened channel or
// provider coming off its open time, or a probe slot's lease running out. It
// reads the top of the wake index.
func (s *State) scheduleWake(now int64, fx *[]Effect) {
	at, ok := s.wakes.next()
	if ok && at < now {
		at = now
	}
	if at != s.wakeAt {
		s.wakeAt = at
		*fx = append(*fx, ScheduleWake{AtMs: at})
	}
}
