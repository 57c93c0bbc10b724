package policy

// wait retries on ch, which is still closed, after a backoff that honours
// the provider's stated wait. A stated wait beyond the agent's recovery time
// is the channel saying it is out for longer than the agent can wait: it
// opens for that long, and the agent looks for the soonest channel instead
// (a fallback may be routable now) rather than giving up on this one.
func (s *State) wait(now int64, a *agent, e RequestError, ch Channel, c *circuit, class Class, fx *[]Effect) Verdict {
	a.attempts++
	d := Backoff(a.attempts, s.cfg.BackoffBaseMs, s.cfg.BackoffMaxMs, e.Failure.RetryAfterMs, e.Rand)
	if now+d-a.recoveringSince > s.cfg.GiveUpAfterMs && !s.cfg.Persistent {
		if at, ok := s.soonestOther(now, a, ch); ok && at-a.recoveringSince <= s.cfg.GiveUpAfterMs {
			return s.trip(now, a, e, ch, c, class, fx)
		}
		return s.giveUp(a, e, ch, RecoveryTimeout, fx)
	}
	*fx = append(*fx, Retrying{Agent: e.Agent, Channel: ch, Attempt: a.attempts, DelayMs: d, Code: e.Failure.Code})
	return Verdict{Kind: Wait, DelayMs: d}
}

// waitFor holds the agent's turn, after failed failed, until next, the
// soonest of its preferences, can be tried again at `at`. Each channel's own
// open time already holds what its provider stated (a reset an hour away on
// a fallback is that fallback's, not the wait for every channel), so the wait
// is `at` itself, cut short if a channel is usable sooner (hold.go). The
// agent gives up only when even `at` is beyond its recovery time.
func (s *State) waitFor(now int64, a *agent, e RequestError, failed, next Channel, at int64, fx *[]Effect) Verdict {
	if at-a.recoveringSince > s.cfg.GiveUpAfterMs && !s.cfg.Persistent {
		return s.giveUp(a, e, failed, RecoveryTimeout, fx)
	}
	a.attempts++
	d := at - now
	if d <= 0 { // back already (a slot held by a probe that is due): a backoff spaces the retries
		d = Backoff(a.attempts, s.cfg.BackoffBaseMs, s.cfg.BackoffMaxMs, 0, e.Rand)
		if !s.cfg.Persistent {
			d = min(d, a.recoveringSince+s.cfg.GiveUpAfterMs-now)
		}
	}
	s.hold(a, now+d)
	*fx = append(*fx, Retrying{Agent: e.Agent, Channel: next, Attempt: a.attempts, DelayMs: d, Code: e.Failure.Code})
	return Verdict{Kind: Wait, DelayMs: d}
}

// soonestOther is when the first of the agent's preferences other than ch
// can take a request (now, if one can), and false when none ever will.
func (s *State) soonestOther(now int64, a *agent, ch Channel) (int64, bool) {
	_, ok, _, at := s.walk(now, s.preferences(a, ch), ch, Channel{}, true, false, false)
	if ok {
		return now, true
	}
	return at, at >= 0
}
