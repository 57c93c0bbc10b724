package codec

import (
	"math"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// toolKeys are the keys of the row's `tools` object, as the WIT record
// `tool-retry-config` names them.
var toolKeys = []string{"retry", "backoffMs", "maxBackoffMs", "maxAttempts", "retryDeadlineMs"}

// toolRetryConfig reads the row's `tools` object over cfg, which holds the
// defaults. Errors name the key as written: `config key "tools.maxAttempts": ...`.
func (d *decoder) toolRetryConfig(v gjson.Result, cfg *policy.ToolRetryConfig) {
	if !present(v) || !d.object(v, "tools", toolKeys...) {
		return
	}
	if list := v.Get("retry"); present(list) {
		cfg.Retry = []string{}
		for i, p := range d.array(list, "tools.retry", false) {
			cfg.Retry = append(cfg.Retry, d.str(p, "tools.retry["+strconv.Itoa(i)+"]", true))
		}
	}
	if n, ok := d.uint(v.Get("backoffMs"), "tools.backoffMs", false, maxMs); ok {
		cfg.BackoffMs = int64(n)
	}
	if n, ok := d.uint(v.Get("maxBackoffMs"), "tools.maxBackoffMs", false, maxMs); ok {
		cfg.MaxBackoffMs = int64(n)
	}
	if n, ok := d.uint(v.Get("maxAttempts"), "tools.maxAttempts", false, math.MaxInt32); ok {
		cfg.MaxAttempts = int(n)
	}
	if n, ok := d.uint(v.Get("retryDeadlineMs"), "tools.retryDeadlineMs", false, maxMs); ok {
		cfg.RetryDeadlineMs = int64(n)
	}
}

// writeToolRetryConfig writes the WIT record `resolved-tool-retry` as `tools`.
func writeToolRetryConfig(w *writer, c policy.ToolRetryConfig) {
	w.beginObject("tools")
	w.strings("retry", c.Retry)
	w.int("backoffMs", c.BackoffMs)
	w.int("maxBackoffMs", c.MaxBackoffMs)
	w.int("maxAttempts", int64(c.MaxAttempts))
	w.int("retryDeadlineMs", c.RetryDeadlineMs)
	w.endObject()
}

// toolResult reads the WIT record `tool-result-event` (the event object e).
var (
	toolResultKeys  = []string{"kind", "agent", "call", "tool", "attempt", "failure", "timeoutMs", "rand"}
	toolFailureKeys = []string{"code", "message"}
)

func (d *decoder) toolResult(e gjson.Result) policy.ToolResult {
	f, _ := d.fields(e, "event", toolResultKeys)
	attempt, ok := d.uint(f.get("attempt"), "event.attempt", true, math.MaxInt32)
	if ok && attempt < 1 {
		d.fail("event.attempt", "must be at least 1 (attempts count from 1)")
	}
	r, _ := d.uint(f.get("rand"), "event.rand", true, maxMs-1)
	timeout, _ := d.uint(f.get("timeoutMs"), "event.timeoutMs", false, maxMs)
	ev := policy.ToolResult{
		Agent:     d.str(f.get("agent"), "event.agent", false),
		Call:      d.str(f.get("call"), "event.call", true),
		Tool:      d.str(f.get("tool"), "event.tool", true),
		Attempt:   int(attempt),
		TimeoutMs: int64(timeout),
		Rand:      r,
	}
	if fv := f.get("failure"); present(fv) {
		if tf, ok := d.fields(fv, "event.failure", toolFailureKeys); ok {
			ev.Failure = &policy.ToolFailure{
				Code:    d.str(tf.get("code"), "event.failure.code", false),
				Message: d.str(tf.get("message"), "event.failure.message", true),
			}
		}
	}
	return ev
}

// writeToolVerdict writes the fields of the `tool-retry` and `tool-return`
// verdict cases; the kind is already written.
func writeToolVerdict(w *writer, v policy.Verdict) {
	t := v.Tool
	if v.Kind == policy.RetryTool {
		w.int("attempt", int64(t.Attempts+1)) // the attempt about to be made
		w.int("delayMs", t.DelayMs)
		w.int("deadlineMs", t.DeadlineMs)
		return
	}
	w.str("outcome", string(t.Outcome))
	w.int("attempts", int64(t.Attempts))
	if t.Note != "" {
		w.str("note", t.Note)
	}
}

// writeToolEffect writes the WIT effect case `tool-retry`.
func writeToolEffect(w *writer, e policy.ToolRetried) {
	w.str("kind", "tool-retry")
	if e.Agent != "" {
		w.str("agent", e.Agent)
	}
	w.str("call", e.Call)
	w.str("tool", e.Tool)
	w.int("attempt", int64(e.Attempt))
	w.str("outcome", string(e.Outcome))
	if e.Cause != "" {
		w.str("reason", string(e.Cause))
	}
	w.int("delayMs", e.DelayMs)
}
