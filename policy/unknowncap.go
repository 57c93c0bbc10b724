package policy

// The unknown-failure cap, for dsh-reconnect's `retryUnknown: false`. An
// unknown failure (a code the host does not explain, such as a gateway's
// PI_AI_ERROR, with nothing in its status or wording to go by) is counted
// like a transient one by default, and with `persistent` it is retried
// until the turn is cancelled. Some of them never go away (a gateway's
// standing refusal in words this module does not know), so a user may cap
// them: off, retryUnknown lets one model step fail unknownMaxRetries times
// in a row with an unknown failure, each retried as usual, and hands the
// next one back. Every attempt counts, the host's own retries included: it
// is the provider's answers that are counted, not who asked again.
//
// A missing or unconfigured model is not unknown (classify.go reads it as
// model-unavailable from its code or its wording), so it is never capped, as
// in reconnect; like any other class it breaks the run of unknown failures.

// noteUnknown counts a fresh failure of class into the agent's run of unknown
// failures: one more if it is unknown, none left if it is not.
func (a *agent) noteUnknown(class Class) {
	if class == ClassUnknown {
		a.unknownRun++
		return
	}
	a.unknownRun = 0
}

// unknownSpent reports whether this unknown failure is one beyond the cap.
func (c Config) unknownSpent(a *agent, class Class) bool {
	return class == ClassUnknown && !c.RetryUnknown && a.unknownRun > c.UnknownMaxRetries
}

// handBackUnknown hands the failure back once the cap is spent. Before the
// host, the host's retry policy still has its say first, as for a permanent
// failure (the stock one does not retry an unknown code, so it declines and
// is asked again); after it, the module gives the failure back instead of
// waiting, failing over or persisting.
func (s *State) handBackUnknown(a *agent, e RequestError, ch Channel, fx *[]Effect) Verdict {
	if e.Phase == BeforeHost {
		return Verdict{Kind: Defer}
	}
	return s.giveUp(a, e, ch, UnknownRetriesSpent, fx)
}
