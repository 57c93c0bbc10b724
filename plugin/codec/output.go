package codec

import (
	"fmt"

	"github.com/dsh-resilience/dsh-resilience/policy"
)

// writeTried writes a give-up's channels tried, when there are any: the
// effect and its audit record (plugin/codec/audit.go) carry the same list.
func writeTried(w *writer, tried []policy.Tried) {
	if len(tried) == 0 {
		return
	}
	w.beginArray("tried")
	for _, t := range tried {
		w.beginObject("")
		writeChannel(w, "channel", t.Channel)
		w.str("code", t.Code)
		w.endObject()
	}
	w.endArray()
}

// writeOutput encodes the WIT record `step-output`. Each effect kind has one
// case here, and an unknown kind panics: a new effect must be given a wire form
// (and a WIT case) before it can ship. Each audited effect carries its audit
// record and log line (audit.go).
func writeOutput(w *writer, out policy.Output, a *auditor, redacted *policy.Failure) {
	w.beginObject("")
	writeVerdict(w, out.Verdict)
	w.beginArray("effects")
	for _, fx := range out.Effects {
		w.beginObject("")
		switch e := fx.(type) {
		case policy.CircuitChanged:
			w.str("kind", "circuit")
			writeChannel(w, "channel", e.Channel)
			w.str("from", string(e.From))
			w.str("to", string(e.To))
			w.str("cause", e.Cause)
			if e.Class != "" {
				w.str("class", string(e.Class))
			}
			if e.To == policy.Open {
				w.int("openUntilMs", e.OpenUntilMs)
			}
			if e.TrippedBy != "" {
				w.str("trippedBy", e.TrippedBy)
			}
		case policy.FailedOver:
			w.str("kind", "failover")
			w.str("agent", e.Agent)
			writeChannel(w, "from", e.From)
			writeChannel(w, "to", e.To)
			w.str("code", e.Code)
			w.str("class", string(e.Class))
			if !e.Home.IsZero() && e.Home != e.From {
				writeChannel(w, "home", e.Home) // absent: from is home
			}
			if e.Failovers > 0 {
				w.int("failovers", int64(e.Failovers))
			}
		case policy.Retrying:
			w.str("kind", "retry")
			w.str("agent", e.Agent)
			writeChannel(w, "channel", e.Channel)
			w.int("attempt", int64(e.Attempt))
			w.int("delayMs", e.DelayMs)
			w.str("code", e.Code)
		case policy.GaveUp:
			w.str("kind", "give-up")
			w.str("agent", e.Agent)
			writeChannel(w, "channel", e.Channel)
			w.str("reason", string(e.Reason))
			w.str("code", e.Code)
			if e.Failovers > 0 {
				w.int("failovers", int64(e.Failovers))
			}
			writeTried(w, e.Tried)
		case policy.Spilled:
			w.str("kind", "spill")
			w.str("agent", e.Agent)
			writeChannel(w, "from", e.From)
			writeChannel(w, "to", e.To)
			w.str("code", e.Code)
			w.int("failures", int64(e.Failures))
		case policy.WaitCut:
			w.str("kind", "wait-cut")
			w.str("agent", e.Agent)
			writeChannel(w, "channel", e.Channel)
		case policy.ScheduleWake:
			w.str("kind", "schedule-wake")
			w.int("atMs", e.AtMs)
		case policy.Probe:
			w.str("kind", "probe")
			writeChannel(w, "channel", e.Channel)
		case policy.EffortDropped:
			w.str("kind", "effort-dropped")
			w.str("agent", e.Agent)
			writeChannel(w, "channel", e.Channel)
			w.str("effort", e.Effort)
		case policy.Unroutable:
			w.str("kind", "unroutable")
			writeChannel(w, "channel", e.Channel)
			w.strings("keys", e.Keys)
			w.str("code", e.Code)
		case policy.Routable:
			w.str("kind", "routable")
			writeChannel(w, "channel", e.Channel)
			w.strings("keys", e.Keys)
		case policy.Stalled:
			writeStalled(w, e)
		case policy.SlowChanged:
			writeSlowChanged(w, e)
		case policy.Hedged:
			writeHedged(w, e)
		case policy.ToolRetried:
			writeToolEffect(w, e)
		case policy.SessionRoute:
			writeSessionRoute(w, e)
		case policy.SkippedTooSmall:
			w.str("kind", "skipped-too-small")
			w.str("agent", e.Agent)
			writeChannel(w, "channel", e.Channel)
			w.int("contextTokens", e.ContextTokens)
			w.int("contextWindow", e.ContextWindow)
			w.int("usable", e.Usable)
		case policy.Returned:
			w.str("kind", "returned")
			w.str("agent", e.Agent)
			writeChannel(w, "from", e.From)
			writeChannel(w, "to", e.To)
		default:
			if writeQuotaEffect(w, fx) {
				break
			}
			panic(fmt.Sprintf("codec: effect %T has no wire form", fx))
		}
		a.write(w, fx)
		w.endObject()
	}
	w.endArray()
	if redacted != nil {
		writeFailure(w, "redacted", *redacted)
	}
	w.endObject()
}

func writeVerdict(w *writer, v policy.Verdict) {
	w.beginObject("verdict")
	w.str("kind", string(v.Kind))
	switch v.Kind {
	case policy.Swap:
		w.str("provider", v.Channel.Provider)
		w.str("model", v.Channel.Model)
		if v.DropReasoningEffort {
			w.boolean("dropReasoningEffort", true)
		}
		if v.ReasoningEffort != "" {
			w.str("reasoningEffort", v.ReasoningEffort)
		}
	case policy.Wait:
		w.int("delayMs", v.DelayMs)
		if v.Held {
			w.boolean("held", true)
		}
	case policy.Watch, policy.Cut:
		writeStallVerdict(w, v)
	case policy.Delegate:
		w.str("reason", string(v.Reason))
		if v.Original != nil {
			writeFailure(w, "original", *v.Original)
		}
	case policy.RetryTool, policy.ReturnTool:
		writeToolVerdict(w, v)
	}
	w.endObject()
}

// writeFailure writes the WIT record `failure`.
func writeFailure(w *writer, k memberKey, f policy.Failure) {
	w.beginObject(k)
	w.str("code", f.Code)
	if f.Message != "" {
		w.str("message", f.Message)
	}
	if f.Status != 0 {
		w.int("status", int64(f.Status))
	}
	if f.RetryAfterMs != 0 {
		w.int("providerRetryAfterMs", f.RetryAfterMs)
	}
	w.endObject()
}
