package policy

// preferences is the order in which an agent's request looks for a channel:
// its home (Return) or its current channel (Stay) first, then the user's
// chosen backup, then the chain. Duplicates are harmless: the first routable wins.
func (s *State) preferences(a *agent, current Channel) []Channel {
	if pool := s.poolPreferences(a); pool != nil {
		return pool
	}
	first := current
	if s.cfg.Recovery == Return && !a.home.IsZero() {
		first = a.home
	}
	out := make([]Channel, 0, 2+len(s.cfg.Chain))
	out = append(out, first)
	if !s.backup.IsZero() {
		out = append(out, s.backup)
	}
	return append(out, s.cfg.Chain...)
}

// firstRoutable returns the first preference that could take a request now,
// skipping avoid and every channel the host said it cannot serve. It changes nothing.
func (s *State) firstRoutable(now int64, prefs []Channel, avoid Channel) (Channel, bool) {
	for _, ch := range prefs {
		if ch != avoid && !ch.IsZero() && s.servable(now, ch) && s.routable(now, ch) {
			return ch, true
		}
	}
	return Channel{}, false
}

// earliestReopen is the preference that will be routable first, and when.
// The channel that just failed counts too: it may well be the first back. A
// channel the host cannot serve never comes back by waiting.
func (s *State) earliestReopen(now int64, prefs []Channel) (Channel, int64) {
	var best Channel
	at := int64(-1)
	for _, ch := range prefs {
		if ch.IsZero() || !s.servable(now, ch) {
			continue
		}
		if t := s.reopensAt(now, ch); at < 0 || t < at {
			best, at = ch, t
		}
	}
	return best, at
}

// keepsEffort says whether effort may go to target: only when the host said
// the target's model lists it. An unknown model drops it, because the host
// refuses an unlisted effort before sending, which ends the turn.
func (s *State) keepsEffort(target Channel, effort string) bool {
	info, ok := s.models[target.Key()]
	if !ok || !info.Known {
		return false
	}
	for _, e := range info.Efforts {
		if e == effort {
			return true
		}
	}
	return false
}

// checkProvider opens the provider's breaker when ProviderThreshold distinct
// models under it are open: the platform is down, not one model, so its other
// models are not worth a failover either. It stays open as long as the
// longest of them.
func (s *State) checkProvider(now int64, name string, fx *[]Effect) {
	if s.cfg.ProviderThreshold == 0 {
		return
	}
	open, until := 0, int64(0)
	for _, c := range s.circuits {
		if c.channel.Provider == name && c.state != Closed {
			open++
			until = max(until, c.openUntilMs)
		}
	}
	p := s.provider(name)
	if open >= s.cfg.ProviderThreshold && (p.state == Closed || p.openUntilMs < until) && until > now {
		p.openUntilMs = until
		p.transition(now, Open, "models-open", "", fx)
	}
}

// providerSucceeded closes the provider's breaker: one of its models answered.
func (s *State) providerSucceeded(now int64, name string, fx *[]Effect) {
	if p := s.providers[name]; p != nil && p.state != Closed {
		p.transition(now, Closed, "recovered", "", fx)
	}
}
