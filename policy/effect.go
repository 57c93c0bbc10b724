package policy

// VerdictKind is how the shim answers the host's waterfall.
type VerdictKind string

const (
	// Pass (agent/request): use the proposed config unchanged.
	Pass VerdictKind = "pass"
	// Swap (agent/request): send the request to Verdict.Channel instead.
	Swap VerdictKind = "swap"
	// Defer (agent/request-error, before-host): call next() and ask again after-host.
	Defer VerdictKind = "defer"
	// Retry (agent/request-error): return {kind:'retry'} at once.
	Retry VerdictKind = "retry"
	// Wait (agent/request-error): wait DelayMs, cancellably, then retry. A
	// cancelled wait delegates.
	Wait VerdictKind = "wait"
	// Delegate (agent/request-error): hand the failure back to the host.
	Delegate VerdictKind = "delegate"
)

// GiveUpReason says why a failure was handed back.
type GiveUpReason string

const (
	// NoRoutableFallback: every other channel is open (or there is none).
	NoRoutableFallback GiveUpReason = "no-routable-fallback"
	// NotRecoverable: the failure would recur on any channel (bad request,
	// context overflow, cancel): not the channel's fault.
	NotRecoverable GiveUpReason = "not-recoverable"
	// BudgetExhausted: the agent failed over MaxFailovers times without a success.
	BudgetExhausted GiveUpReason = "budget-exhausted"
	// RecoveryTimeout: nothing became routable again within GiveUpAfterMs of
	// the agent's first failure.
	RecoveryTimeout GiveUpReason = "recovery-timeout"
	// UnknownChannel: the failed request was not routed by this state (the
	// plugin was loaded mid-turn, or that request failed open), so the policy
	// cannot tell which channel failed and leaves the failure to the host.
	UnknownChannel GiveUpReason = "unknown-channel"
	// UnknownRetriesSpent: with retryUnknown off, the model step failed
	// unknownMaxRetries+1 times in a row with an unknown failure (unknowncap.go).
	UnknownRetriesSpent GiveUpReason = "unknown-retries-spent"
)

// Verdict is the answer for the host's waterfall.
type Verdict struct {
	Kind VerdictKind
	// Channel is the target of a Swap.
	Channel Channel
	// DropReasoningEffort is set on a Swap when the proposed effort must not
	// go to the target: the host refuses an effort the model does not list
	// before sending, outside agent/request-error, which ends the turn.
	DropReasoningEffort bool
	// ReasoningEffort, on a Swap, replaces the proposed effort: the target
	// pool route's own, which its model lists.
	ReasoningEffort string
	// DelayMs is a Wait's delay.
	DelayMs int64
	// Held, on a Wait, says it is a long-term quota wait (quota.go): the
	// session's switch turned off ends it, and the failure goes back to the
	// host. The shell learns it here, not by looking for a QuotaWait effect.
	Held bool
	// Reason is a Delegate's reason; empty when the policy simply has no opinion.
	Reason GiveUpReason
	// Original, on a Delegate, is the failure the host should end the turn
	// with instead of the one in hand: the failure that made the agent leave
	// its home channel, when every target it tried since cannot be served.
	Original *Failure
	// Tool is a tool-retry or tool-return verdict's decision (toolretry.go).
	Tool ToolDecision
	// Stall is a Watch's wake-up or a Cut's failure (stall.go).
	Stall StallVerdict
}

// Effect is a side effect for the shell, carried out in order. The set is
// closed: CircuitChanged, FailedOver, Retrying, GaveUp, ScheduleWake, Probe,
// EffortDropped (here), Unroutable and Routable (servable.go), ToolRetried
// (toolretry.go), Stalled (stall.go), QuotaWait, QuotaRouted, QuotaSession
// (quota.go), RefreshBalance and ScheduleRefresh (balance.go), Spilled
// (spill.go), WaitCut (hold.go).
type Effect interface{ isEffect() }

// CircuitChanged reports every breaker transition: the shell logs it, emits
// dsh-resilience/circuit-opened or /circuit-closed, and persists health.
type CircuitChanged struct {
	Channel     Channel
	From, To    CircuitState
	Cause       string // the failure code, or "recovered" / "cooled-down" / "models-open" / "stall"
	Class       Class  // the failure's class, when a failure caused it
	OpenUntilMs int64  // when To is Open
	// TrippedBy, on a provider breaker opening: the model under it that
	// opened last, while still down (circuit.trippedBy), which
	// dsh-model-failover's platform circuit names; "" when there is none
	// (its balance, or health adopted from another host, opened it).
	TrippedBy string
}

// FailedOver reports that the agent's next request goes to To. Home is where
// the agent belongs (session.go): the shell keeps it for a restarted host
// until the agent returns (Returned).
type FailedOver struct {
	Agent    string
	From, To Channel
	Code     string
	Class    Class
	Home     Channel
	// Failovers numbers this one since the agent's last success (1-based,
	// bounded by Config.MaxFailovers); 0 for a pool's own route change.
	Failovers int
}

// Retrying reports a same-channel retry after DelayMs.
type Retrying struct {
	Agent   string
	Channel Channel
	Attempt int
	DelayMs int64
	Code    string
}

// GaveUp reports a failure handed back to the host, and why: Channel and
// Code are the failure that ended the turn, Tried every channel the agent
// failed on since its last success, in the order it first failed on each,
// with the last code each answered.
type GaveUp struct {
	Agent   string
	Channel Channel
	Reason  GiveUpReason
	Code    string
	Tried   []Tried
	// Failovers is how many the agent had made since its last success.
	Failovers int
}

// Tried is one channel a recovery failed on, and its last code.
type Tried struct {
	Channel Channel
	Code    string
}

// ScheduleWake asks for a Wake event at AtMs, replacing any earlier request;
// AtMs 0 cancels it.
type ScheduleWake struct{ AtMs int64 }

// Probe asks the shell to send Channel a tiny real request (a few output
// tokens) and report a ProbeResult. The channel's probe slot is held for it.
type Probe struct{ Channel Channel }

// EffortDropped reports that a swap left the proposed reasoning effort behind.
type EffortDropped struct {
	Agent   string
	Channel Channel
	Effort  string
}

func (CircuitChanged) isEffect() {}
func (ScheduleWake) isEffect()   {}
func (Probe) isEffect()          {}
func (EffortDropped) isEffect()  {}
func (FailedOver) isEffect()     {}
func (Retrying) isEffect()       {}
func (GaveUp) isEffect()         {}

var (
	_ Effect = CircuitChanged{}
	_ Effect = FailedOver{}
	_ Effect = Retrying{}
	_ Effect = GaveUp{}
	_ Effect = ScheduleWake{}
	_ Effect = Probe{}
	_ Effect = EffortDropped{}
)

// Output is what one Step returns.
type Output struct {
	Verdict Verdict
	Effects []Effect
}
