package policy

// Event is one input to Step. The set is closed: Request, RequestError,
// Settled, Disposed, Wake, ProbeResult, ModelInfo, SetBackup (here), ToolResult
// (toolretry.go), StreamCheck (stall.go), SetQuota, SetPool (quota.go),
// BalanceReading (balance.go), RestoreRoute (session.go).
type Event interface{ isEvent() }

// Phase says when the shim asks about a failed request.
type Phase string

const (
	// BeforeHost: the host's retry plugin has not seen the failure yet. The
	// policy acts now only where waiting for its budget would be wasted (a
	// spent quota, a channel already known to be down); otherwise it defers.
	BeforeHost Phase = "before-host"
	// AfterHost: the host's retry plugin declined the failure (its budget is
	// spent, or the code is not one it retries).
	AfterHost Phase = "after-host"
)

// HostRetryPolicy is the failing route's dsh-llm-retry policy, when it has one.
type HostRetryPolicy struct {
	Mode           string
	MaxRetries     int
	RetryableCodes []string
}

// covers reports whether the host's retry plugin retries this code itself,
// so that its declining means its budget for the code is spent.
func (h *HostRetryPolicy) covers(code string) bool {
	if h == nil || h.Mode != "normal" || h.MaxRetries <= 0 {
		return false
	}
	for _, c := range h.RetryableCodes {
		if c == code {
			return true
		}
	}
	return false
}

// Request is agent/request: the host proposes the channel for the agent's next call.
type Request struct {
	Agent           string
	Proposed        Channel
	ReasoningEffort string
	// ContextTokens is the request's context as the host measures it (its
	// token meter's estimate); 0 when unknown (fit.go).
	ContextTokens int64
}

// RequestError is agent/request-error: the agent's request on Provider failed.
type RequestError struct {
	Agent     string
	Provider  string
	Failure   Failure
	Phase     Phase
	HostRetry *HostRetryPolicy
	// Rand is a uniform draw in [0, 2^53) for jitter.
	Rand uint64
}

// Settled says the agent's last request did not fail (its turn ended, or the
// next step began): the host has no success event, so success is inferred.
type Settled struct{ Agent string }

// Disposed says the agent is gone.
type Disposed struct{ Agent string }

// Wake says the time the policy asked for (ScheduleWake) has come.
type Wake struct{}

// ProbeResult is the outcome of a Probe the shim carried out.
type ProbeResult struct {
	Channel Channel
	OK      bool
	Failure Failure // when !OK
}

// ModelInfo tells what the host knows of a channel's model: the reasoning
// efforts it accepts. Known is false when the host could not resolve it, and
// Code then says why: NO_ADAPTER or UNKNOWN_MODEL mean it can never serve the
// channel as configured (servable.go); anything else may pass.
type ModelInfo struct {
	Channel Channel
	Known   bool
	Efforts []string
	Code    string
	// ContextWindow is the model's window in tokens; 0 when the host declares none (fit.go).
	ContextWindow int64
	// untilMs bounds a mark the policy made itself from a failed request
	// (servable.go); 0 for what the host said, which lasts until it says otherwise.
	untilMs int64
}

// SetBackup records the user's chosen backup channel, tried before the chain;
// a zero Channel clears it.
type SetBackup struct{ Channel Channel }

func (Request) isEvent()      {}
func (RequestError) isEvent() {}
func (Settled) isEvent()      {}
func (Disposed) isEvent()     {}
func (Wake) isEvent()         {}
func (ProbeResult) isEvent()  {}
func (ModelInfo) isEvent()    {}
func (SetBackup) isEvent()    {}

var (
	_ Event = Request{}
	_ Event = RequestError{}
	_ Event = Settled{}
	_ Event = Disposed{}
	_ Event = Wake{}
	_ Event = ProbeResult{}
	_ Event = ModelInfo{}
	_ Event = SetBackup{}
)
