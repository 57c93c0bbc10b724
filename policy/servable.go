package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Failover targets the host cannot route. A chain or backup channel whose
// provider has no adapter, whose model the route does not list, or whose
// credential is missing fails every request the same way. Measured in the
// real host: a target without an adapter took the failover, failed
// NO_ADAPTER and held the turn; a target whose model is not listed ended the
// task with UNKNOWN_MODEL (the host refuses it before sending, outside
// agent/request-error), an error about a model the user never chose. So the
// host is asked about every target at start and whenever its adapters change
// (ModelInfo), and a target it cannot serve is never routed to.

// unservableCodes are the host's answers that mean a channel cannot take a
// request at all, whatever is retried: not an outage, a configuration.
var unservableCodes = map[string]bool{"NO_ADAPTER": true, "UNKNOWN_MODEL": true, "MISSING_CREDENTIAL": true}

func unservableCode(code string) bool { return unservableCodes[strings.ToUpper(code)] }

// Unroutable reports a chain or backup channel the host says it cannot serve
// (at start, when its adapters change, or when a failover to it failed so):
// the shell audits a warning naming the config keys.
type Unroutable struct {
	Channel Channel
	Keys    []string // e.g. chain[2], backup; empty when no key names it any more
	Code    string
}

// Routable reports that a channel reported Unroutable can be served again:
// the host resolved it since (an adapter registered, a model listed).
type Routable struct {
	Channel Channel
	Keys    []string
}

func (Unroutable) isEffect() {}
func (Routable) isEffect()   {}

var (
	_ Effect = Unroutable{}
	_ Effect = Routable{}
)

// servable reports whether the host may serve ch: it has not said it cannot
// (or a mark made from a failed request has run out).
func (s *State) servable(now int64, ch Channel) bool {
	if s.unservableMarks == 0 {
		return true // the usual case, without a lookup per chain entry walked
	}
	info, ok := s.models[ch]
	return !ok || info.Known || !unservableCode(info.Code) || (info.untilMs != 0 && now >= info.untilMs)
}

// setModel records info, counting the channels marked unservable.
func (s *State) setModel(info ModelInfo) {
	marked := func(m ModelInfo) bool { return !m.Known && unservableCode(m.Code) }
	prev, had := s.models[info.Channel]
	if had && marked(prev) {
		s.unservableMarks--
	}
	if info.untilMs != 0 {
		info.ContextWindow = prev.ContextWindow // a mark of our own says nothing of the window
	}
	if marked(info) {
		s.unservableMarks++
	}
	s.models[info.Channel] = info
}

// onModelInfo records what the host said of a channel. A channel found
// unservable is reported once per code; a later answer that resolves it
// (an adapter registered since) makes it routable again, and says so.
func (s *State) onModelInfo(now int64, e ModelInfo, fx *[]Effect) {
	// Kept: copied out of the decoded input its names were sliced from.
	e.Channel, e.Code = e.Channel.clone(), strings.Clone(e.Code)
	e.Efforts = slices.Clone(e.Efforts)
	for i := range e.Efforts {
		e.Efforts[i] = strings.Clone(e.Efforts[i])
	}
	wasServable := s.servable(now, e.Channel)
	prev, had := s.models[e.Channel]
	if e.ContextWindow > 0 && (!had || prev.ContextWindow != e.ContextWindow) {
		delete(s.refused, e.Channel) // a window declared anew: what it refused before says nothing of it
	}
	s.setModel(e)
	s.chainFit(e.Channel)
	switch {
	case !e.Known && unservableCode(e.Code) && (!had || prev.Known || prev.Code != e.Code || prev.untilMs != 0):
		*fx = append(*fx, Unroutable{Channel: e.Channel, Keys: s.targetKeys(e.Channel), Code: e.Code})
	case !wasServable && s.servable(now, e.Channel):
		*fx = append(*fx, Routable{Channel: e.Channel, Keys: s.targetKeys(e.Channel)})
	}
}

// onUnservable handles a failover target's request that failed because the
// host cannot serve its channel at all (a target it did not know about at
// start, or a credential missing at send time): the channel is marked unservable and the
// agent goes on down its list at once. The mark lasts maxCooldownMs, or until
// the host's adapters change and it is asked again: a credential stored
// later (the web Models page) says nothing to the adapters. When nothing is left, the failure
// that made the agent leave home goes back to the host, not this one: the
// user's task should end with what went wrong on the channel they chose.
func (s *State) onUnservable(now int64, a *agent, e RequestError, ch Channel, class Class, fx *[]Effect) Verdict {
	if c := s.circuits[ch]; c != nil {
		c.release(e.Agent)
	}
	if s.servable(now, ch) {
		s.setModel(ModelInfo{Channel: ch, Code: strings.Clone(strings.ToUpper(e.Failure.Code)), untilMs: now + s.cfg.MaxCooldownMs})
		*fx = append(*fx, Unroutable{Channel: ch, Keys: s.targetKeys(ch), Code: strings.ToUpper(e.Failure.Code)})
	}
	if a.recoveringSince == 0 {
		a.recoveringSince = now
	}
	// Not back to a channel this request spilled from: it was failing it
	// (spill.go), and its own failure is the one to hand back.
	if _, ok := s.firstRoutableAvoiding(now, s.preferences(a, ch), ch, a.spillFrom); ok {
		return s.failover(now, a, e, ch, class, fx)
	}
	origin, hasOrigin := a.origin, a.hasOrigin
	v := s.giveUp(a, e, ch, NoRoutableFallback, fx)
	if hasOrigin {
		v.Original = &origin
	}
	return v
}

// targetKeys names the config keys that route to ch, for the operator.
func (s *State) targetKeys(ch Channel) []string {
	var keys []string
	for i, c := range s.cfg.Chain {
		if c == ch {
			keys = append(keys, fmt.Sprintf("chain[%d]", i))
		}
	}
	if s.backup == ch {
		keys = append(keys, "backup")
	}
	return append(keys, s.cfg.poolKeys(ch)...)
}
