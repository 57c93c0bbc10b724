package policy

import (
	"fmt"
	"slices"
	"strings"
)

// Tool-call retry defaults: what the `tools` config object falls back to.
const (
	// DefaultToolBackoffMs is the ceiling of the wait before the first repeat.
	// Half a second lets a reset connection pool or a busy peer move on
	// without the agent noticing the pause.
	DefaultToolBackoffMs = 500
	// DefaultToolMaxBackoffMs caps the doubling. The agent's whole turn waits
	// on the call, so waits longer than a few seconds cost more than a clear
	// failure the model can work around.
	DefaultToolMaxBackoffMs = 8_000
	// DefaultToolMaxAttempts counts the first call too: two repeats ride out a
	// blip, and a third failure is an outage the model should hear about.
	DefaultToolMaxAttempts = 3
	// DefaultToolRetryDeadlineMs bounds each repeated attempt. In this host a
	// repeated next() reaches the tool body directly, past every wrapper the
	// first attempt went through, the host's tool timeout policy included, so
	// nothing else would stop a repeat that hangs. Two minutes outlasts any
	// tool call worth repeating.
	DefaultToolRetryDeadlineMs = 120_000
)

// ToolRetryConfig is the config row's `tools` object: which tool calls may be
// repeated after a transient failure, and how.
//
// # Notes
//   - Nothing is repeated until the operator names it. Whether a tool is safe
//     to run twice is a fact about the tool (does it write, send, order?) that
//     the host's tool contract does not state: isConcurrencySafe is about
//     overlap, not idempotence.
//   - Patterns are literal names or a prefix ending in one `*`, never regular
//     expressions: this list decides what may be executed twice, and `.*`
//     matching every tool is not a mistake worth making possible.
type ToolRetryConfig struct {
	// Retry lists the tools safe to repeat: `web_fetch`, or `mcp_search_*`.
	Retry []string
	// BackoffMs is the first wait's ceiling; it doubles per repeat up to MaxBackoffMs.
	BackoffMs    int64
	MaxBackoffMs int64
	// MaxAttempts counts every attempt, the first included.
	MaxAttempts int
	// RetryDeadlineMs bounds each repeated attempt (not the first, which runs
	// under the host's own wrappers).
	RetryDeadlineMs int64
}

// DefaultToolRetryConfig repeats nothing, with the default backoff and budget.
func DefaultToolRetryConfig() ToolRetryConfig {
	return ToolRetryConfig{
		BackoffMs:       DefaultToolBackoffMs,
		MaxBackoffMs:    DefaultToolMaxBackoffMs,
		MaxAttempts:     DefaultToolMaxAttempts,
		RetryDeadlineMs: DefaultToolRetryDeadlineMs,
	}
}

const toolHourMs = 3600 * 1000

// Validate rejects patterns that are not a name or a prefix, and values out
// of range, naming the key as the operator wrote it (`tools.maxAttempts`).
func (c ToolRetryConfig) Validate() error {
	for i, p := range c.Retry {
		key := fmt.Sprintf("tools.retry[%d]", i)
		star := strings.IndexByte(p, '*')
		if j := slices.Index(c.Retry[:i], p); j >= 0 {
			return &FieldError{key, fmt.Sprintf("%q duplicates tools.retry[%d]", p, j)}
		}
		switch {
		case strings.TrimSpace(p) == "":
			return &FieldError{key, "must be a tool name, or a prefix ending in *"}
		case p == "*":
			return &FieldError{key, "a bare * would repeat every tool, writes included: name the tools that are safe to run twice"}
		case star >= 0 && star != len(p)-1:
			return &FieldError{key, fmt.Sprintf("%q: a * may only end a pattern (patterns are names or prefixes, not regular expressions)", p)}
		}
	}
	switch {
	case c.BackoffMs < 1 || c.BackoffMs > toolHourMs:
		return &FieldError{"tools.backoffMs", "must be between 1 and one hour"}
	case c.MaxBackoffMs < c.BackoffMs || c.MaxBackoffMs > toolHourMs:
		return &FieldError{"tools.maxBackoffMs", "must be at least tools.backoffMs and at most one hour"}
	case c.MaxAttempts < 1 || c.MaxAttempts > 100:
		return &FieldError{"tools.maxAttempts", "must be between 1 (no repeats) and 100"}
	case c.RetryDeadlineMs < 1 || c.RetryDeadlineMs > 24*toolHourMs:
		return &FieldError{"tools.retryDeadlineMs", "must be between 1 and one day"}
	}
	return nil
}

// Declares reports whether the operator named tool as safe to repeat: a
// pattern equal to it, or a pattern `prefix*` it starts with.
func (c ToolRetryConfig) Declares(tool string) bool {
	if tool == "" {
		return false
	}
	for _, p := range c.Retry {
		if prefix, ok := strings.CutSuffix(p, "*"); ok {
			if prefix != "" && strings.HasPrefix(tool, prefix) {
				return true
			}
		} else if p == tool {
			return true
		}
	}
	return false
}

// ToolBackoff is the wait before repeat number retry (1-based): "equal
// jitter" over the same exponential ceiling Backoff uses,
// min(max, base*2^(retry-1)), i.e. a uniform draw in [ceiling/2, ceiling].
//
// Why not Backoff's full jitter: a model request's jitter spreads many agents
// that hit one provider together, and may draw zero. A tool failure worth
// repeating said "later" or got no answer at all, from a peer usually called
// by one agent at a time; repeating it at once mostly meets the same fault.
// Half the ceiling is a floor that always gives the peer some time, and the
// other half still keeps parallel calls apart.
func ToolBackoff(retry int, baseMs, maxMs int64, rand uint64) int64 {
	ceiling := Backoff(retry, baseMs, maxMs, 0, randRange-1) // the highest draw is the ceiling itself
	floor := ceiling / 2
	return floor + Backoff(1, ceiling-floor, ceiling-floor, 0, rand)
}

// ToolFailure is a failed tool call's error, as the host's registry reports it.
type ToolFailure struct {
	// Code is the structured `error.info.code` (a HarnessError's code:
	// INVALID_ARGS, TOOL_TIMEOUT, WEB_PROVIDER_ERROR, ...), or "".
	Code string
	// Message is the error's message; plain thrown errors carry their Node
	// code only in it ("read ECONNRESET").
	Message string
}

// ToolResult is one attempt of a tool call, finished. Tool calls keep no
// state in the policy: the shim's wrapper owns the call from its first
// attempt to its last and says which attempt this was, so nothing here needs
// an end-of-call event to be forgotten, and a module rebuilt mid-call loses
// nothing.
type ToolResult struct {
	Agent string // "" when the call has no agent
	Call  string // the host's call id, for the audit log
	Tool  string
	// Attempt is the attempt that just finished, 1-based.
	Attempt int
	// Failure is nil when the attempt succeeded.
	Failure *ToolFailure
	// TimeoutMs is the tool's own declared budget (ToolDefinition.timeoutMs),
	// 0 when it declares none. The host's timeout policy held the first
	// attempt to it; a repeat, which skips that policy, is held to it too.
	TimeoutMs int64
	// Rand is a uniform draw in [0, 2^53) for jitter.
	Rand uint64
}

// ToolOutcome is what becomes of a tool call after one attempt.
type ToolOutcome string

const (
	// ToolRetry: run the call again after DelayMs, under DeadlineMs.
	ToolRetry ToolOutcome = "retry"
	// ToolSucceeded: the attempt succeeded; return its result.
	ToolSucceeded ToolOutcome = "succeeded"
	// ToolNotDeclared: the operator did not name the tool safe to repeat.
	ToolNotDeclared ToolOutcome = "not-declared"
	// ToolNotTransient: the failure would recur however often it is repeated.
	ToolNotTransient ToolOutcome = "not-transient"
	// ToolAttemptsExhausted: transient, but MaxAttempts attempts were made.
	ToolAttemptsExhausted ToolOutcome = "attempts-exhausted"
)

// toolOutcomes lists every outcome, in the order the WIT enum declares them.
var toolOutcomes = []ToolOutcome{ToolRetry, ToolSucceeded, ToolNotDeclared, ToolNotTransient, ToolAttemptsExhausted}

// ToolOutcomes lists every outcome, in the order the WIT enum declares them
// (a copy: callers cannot change the package's list).
func ToolOutcomes() []ToolOutcome { return slices.Clone(toolOutcomes) }

// ToolDecision is the policy's answer for one finished attempt.
type ToolDecision struct {
	Outcome ToolOutcome
	// Cause is the failure's cause; "" on success and for undeclared tools,
	// whose failures are not the policy's business.
	Cause ToolCause
	// Attempts made so far (the finished one included).
	Attempts int
	// DelayMs and DeadlineMs: for ToolRetry, the wait and the repeat's
	// deadline: RetryDeadlineMs, or the tool's own timeout when shorter.
	DelayMs    int64
	DeadlineMs int64
	// Note is the line the shim appends to the failure the model sees, so a
	// repeated failure does not read as one unlucky call; "" for none.
	Note string
}

// Decide says what to do after one attempt of a tool call.
func (c ToolRetryConfig) Decide(e ToolResult) ToolDecision {
	d := ToolDecision{Attempts: max(e.Attempt, 1)}
	switch {
	case e.Failure == nil:
		d.Outcome = ToolSucceeded
		return d
	case !c.Declares(e.Tool):
		d.Outcome = ToolNotDeclared
		return d
	}
	d.Cause = ClassifyToolFailure(*e.Failure)
	switch {
	case !d.Cause.Transient():
		d.Outcome = ToolNotTransient
	case d.Attempts >= c.MaxAttempts:
		d.Outcome = ToolAttemptsExhausted
	default:
		d.Outcome = ToolRetry
		d.DelayMs = ToolBackoff(d.Attempts, c.BackoffMs, c.MaxBackoffMs, e.Rand)
		d.DeadlineMs = c.RetryDeadlineMs
		if e.TimeoutMs > 0 && e.TimeoutMs < d.DeadlineMs {
			d.DeadlineMs = e.TimeoutMs
		}
		return d
	}
	if d.Attempts > 1 {
		d.Note = fmt.Sprintf("[dsh-resilience] failed after %d attempts (last failure: %s); not retried further.", d.Attempts, d.Cause)
	}
	return d
}

// Verdict kinds for tool calls (`tools/execute`).
const (
	// RetryTool: wait Tool.DelayMs (cancellably), then call the tool again under
	// a deadline of Tool.DeadlineMs fused with the caller's cancellation.
	RetryTool VerdictKind = "tool-retry"
	// ReturnTool: return the last attempt's result, with Tool.Note appended to
	// a failure when there is one.
	ReturnTool VerdictKind = "tool-return"
)

// ToolRetried reports a repeat being scheduled (Outcome ToolRetry), or the
// end of a call that was repeated or ran out of attempts. The shim audits it
// and emits dsh-resilience/tool-retry; it carries no argument values and no
// tool output, only the cause's name.
type ToolRetried struct {
	Agent   string
	Call    string
	Tool    string
	Attempt int // the attempt that just finished
	Outcome ToolOutcome
	Cause   ToolCause // "" when the attempt succeeded
	DelayMs int64     // for ToolRetry
}

func (ToolRetried) isEffect() {}

var (
	_ Effect = ToolRetried{}
	_ Event  = ToolResult{}
)

func (ToolResult) isEvent() {}

// onToolResult decides one finished attempt. It reads only the config: see ToolResult.
func (s *State) onToolResult(e ToolResult, fx *[]Effect) Verdict {
	d := s.cfg.Tools.Decide(e)
	if d.Outcome == ToolRetry || d.Outcome == ToolAttemptsExhausted || d.Attempts > 1 {
		*fx = append(*fx, ToolRetried{Agent: e.Agent, Call: e.Call, Tool: e.Tool,
			Attempt: d.Attempts, Outcome: d.Outcome, Cause: d.Cause, DelayMs: d.DelayMs})
	}
	if d.Outcome == ToolRetry {
		return Verdict{Kind: RetryTool, Tool: d}
	}
	return Verdict{Kind: ReturnTool, Tool: d}
}
