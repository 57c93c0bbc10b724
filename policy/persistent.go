package policy

import "strings"

// Persistent mode, for dsh-reconnect's users: a turn with nowhere else to go
// is never given back by the plugin. A transient outage on the only channel,
// or a model the route does not serve yet (a gateway that has not listed it),
// is retried on that channel with capped backoff (backoffBaseMs doubling to
// backoffMaxMs, Retry-After honoured above it), each wait a Retrying effect
// (an llm/retry row), until the turn is cancelled. What still ends a turn:
// a permanent failure (it would fail the same way again), maxFailovers when
// there is a chain to bounce around, and the user.

// persists reports whether a failure is one to wait out: not a key or
// credential the host lacks or the provider refuses (the same request fails
// the same way until a person acts, as dsh-reconnect handed those back), and
// not a spent allowance: waiting those out is the quota rules' long-term
// wait (quota.go), which reconnect's retryQuota maps to.
func persists(f Failure, class Class) bool {
	code := strings.ToUpper(f.Code)
	return class != ClassQuota && !credentialFailure(f) && code != "MISSING_CREDENTIAL" && code != "NO_ADAPTER"
}

// persist waits on ch and retries it. The channel may be open meanwhile:
// onRequest lets the proposed channel try when nothing is routable
// (fallbackTarget), so the retry goes out all the same.
func (s *State) persist(now int64, a *agent, e RequestError, ch Channel, fx *[]Effect) Verdict {
	if a.recoveringSince == 0 {
		a.recoveringSince = now
	}
	a.attempts++
	d := Backoff(a.attempts, s.cfg.BackoffBaseMs, s.cfg.BackoffMaxMs, e.Failure.RetryAfterMs, e.Rand)
	*fx = append(*fx, Retrying{Agent: e.Agent, Channel: ch, Attempt: a.attempts, DelayMs: d, Code: e.Failure.Code})
	return Verdict{Kind: Wait, DelayMs: d}
}
