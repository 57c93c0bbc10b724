package policy

import "strings"

// A credential failure (a wrong, revoked or unusable API key) is the
// provider's, not the request's: a key is per provider, so the same request
// succeeds on another provider and fails on every model of this one. It is
// classed model-unavailable (the channel cannot serve, like a missing
// credential) and, on top of the channel, opens the provider's breaker, so the
// failover goes to another provider and never to a sibling model that holds
// the same key. dsh-model-failover users knew AUTH/INVALID_CREDENTIAL as
// terminal there; here they move the turn to a provider that can answer.
//
// INVALID_CREDENTIAL is the host's own refusal of an unusable key; AUTH is a
// 401/403 from the provider. An AUTH whose wording names a spent allowance is
// quota (Classify), not a credential failure.
var credentialCodes = map[string]bool{"AUTH": true, "INVALID_CREDENTIAL": true}

// credentialFailure reports whether f condemns its provider's key.
func credentialFailure(f Failure) bool {
	return credentialCodes[strings.ToUpper(f.Code)] && !containsAny(strings.ToLower(f.Message), quotaWords)
}

// credentialTrip handles a credential failure on ch, whose breaker trip
// has just opened: it opens the provider too, so no model of it is routed to
// until its open time is up (then one request through it tells whether the key
// was fixed), and fails over to another provider. With no other provider to
// go to, the failure is handed back at once: waiting never fixes a key.
// ok is false for any other failure.
func (s *State) credentialTrip(now int64, a *agent, e RequestError, ch Channel, class Class, fx *[]Effect) (v Verdict, ok bool) {
	if class != ClassModelUnavailable || !credentialFailure(e.Failure) {
		return Verdict{}, false
	}
	s.provider(ch.Provider).breaker.open(now, &s.cfg, e.Failure.RetryAfterMs, e.Failure.Code, class, fx)
	if _, routable := s.firstRoutable(now, s.preferences(a, ch), ch); !routable {
		return s.giveUp(a, e, ch, NotRecoverable, fx), true
	}
	return s.failover(now, a, e, ch, class, fx), true
}
