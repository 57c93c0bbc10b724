package codec

import (
	"fmt"
	"time"

	"github.com/dsh-resilience/dsh-resilience/policy"
)

// An effect's audit record and log line are the module's word, written
// beside the effect (its `audit` member, wit/policy.wit `audit-entry`): the
// shim writes them as given (host-shim/effect-audit.js). The records are the
// documented contract of docs/audit.md: channels as {provider, model}
// objects, a `return` record's as "provider/model" text (docs/telemetry.md),
// times as JavaScript's Date.toISOString writes them. A kind with no record
// (timer bookkeeping, balance runs) is named in notAudited; a kind neither
// here nor there panics, as writeOutput does, so a new effect is given its
// audit decision before it can ship (audit_test.go checks every kind).

// auditor writes one effect's record into the output and builds its log
// line (in text, kept between calls).
type auditor struct {
	// text is the log line, escaped for the JSON string it goes in as each
	// part is added: the line is in the output only after the record.
	text []byte
	// maxFailovers is read only for a record that counts failovers.
	maxFailovers func() int
	// state and now are the step's, for a record that may mean a webhook
	// notification (notify.go); no state: none is asked.
	state *policy.State
	now   int64
}

// auditLine is what build says of an effect's log line and record.
type auditLine struct {
	level    string // "info", "warn"; "" for no log line
	hostTurn bool   // the shim adds the host's turn and step of the agent (turns.js)
	notice   bool   // a record that may mean a webhook notification (notify.go)
}

// notAudited names the effect kinds with no audit record: timer bookkeeping,
// and the balance runs audited with their reading (host-shim/quota.js).
func notAudited(fx policy.Effect) bool {
	switch fx.(type) {
	case policy.ScheduleWake, policy.RefreshBalance, policy.ScheduleRefresh:
		return true
	}
	return false
}

// write adds the `audit` member of fx to the effect object w is in, when fx
// is audited. The record is written in place, an object inside the output
// (wit/policy.wit `json-object`). As JSON text in a JSON string it was built
// aside, then copied and escaped a second time into the output (2.6 of a
// decide's 38 µs in wasm over bench-day's calls), and the shim parsed it
// twice.
func (a *auditor) write(w *writer, fx policy.Effect) {
	if notAudited(fx) {
		return
	}
	a.text = a.text[:0]
	w.beginObject("audit")
	w.beginObject("record")
	line := a.build(w, fx)
	w.endObject()
	if line.level != "" {
		w.beginObject("log")
		w.str("level", line.level)
		b := append(w.keyed(w.b, "text"), '"')
		w.b = append(append(b, a.text...), '"')
		w.endObject()
	}
	if line.hostTurn {
		w.boolean("hostTurn", true)
	}
	if line.notice {
		a.notice(w, fx)
	}
	w.endObject()
}

// build writes fx's record's members into r, in the record's object, and
// its log line into a.text.
func (a *auditor) build(r *writer, fx policy.Effect) auditLine {
	info := auditLine{level: "info"}
	switch e := fx.(type) {
	case policy.CircuitChanged:
		r.str("type", circuitType(e.To))
		writeChannel(r, "channel", e.Channel)
		r.str("from", string(e.From))
		r.str("cause", e.Cause)
		if e.Class != "" {
			r.str("class", string(e.Class))
		}
		if e.To == policy.Open && e.OpenUntilMs != 0 {
			a.isoTime(r, "openUntil", e.OpenUntilMs)
		}
		a.say("circuit ").ch(e.Channel).say(": ", string(e.From), " -> ", string(e.To), " (", e.Cause, ")")
		info.notice = e.To == policy.Open
	case policy.Probe: // announced with its outcome when the probe settles
		r.str("type", "probe")
		writeChannel(r, "channel", e.Channel)
		return auditLine{}
	case policy.EffortDropped:
		r.str("type", "effort-dropped")
		r.str("agent", e.Agent)
		writeChannel(r, "channel", e.Channel)
		r.str("effort", e.Effort)
		a.say("dropping reasoningEffort ", e.Effort, ": ").ch(e.Channel).say(" does not list it")
	case policy.FailedOver:
		r.str("type", "failover")
		r.str("agent", e.Agent)
		writeChannel(r, "from", e.From)
		writeChannel(r, "to", e.To)
		r.str("code", e.Code)
		r.str("class", string(e.Class))
		a.failovers(r, e.Failovers)
		a.say("failover ").ch(e.From).say(" -> ").ch(e.To).say(" on ", e.Code, " (", string(e.Class), ")")
		info.hostTurn = true
	case policy.Returned:
		// The module's word that the session is home again. Its channels stay
		// "provider/model" text: the webhook and telemetry contracts document
		// them so (docs/telemetry.md).
		r.str("type", "return")
		r.str("agent", e.Agent)
		r.channelText("from", e.From)
		r.channelText("to", e.To)
		a.say("return ").ch(e.From).say(" -> ").ch(e.To)
		info.notice = true
	case policy.SessionRoute:
		r.str("type", "session-pick")
		r.str("agent", e.Agent)
		if !e.Pick.IsZero() {
			writeChannel(r, "pick", e.Pick)
		}
		if !e.Home.IsZero() {
			writeChannel(r, "home", e.Home)
		}
		return auditLine{}
	case policy.Retrying:
		r.str("type", "retry")
		r.str("agent", e.Agent)
		writeChannel(r, "channel", e.Channel)
		r.int("attempt", int64(e.Attempt))
		r.int("delayMs", e.DelayMs)
		r.str("code", e.Code)
		a.say("retry ").ch(e.Channel).say(" #").num(int64(e.Attempt)).say(" in ").num(e.DelayMs).say(" ms on ", e.Code)
	case policy.GaveUp:
		r.str("type", "give-up")
		r.str("agent", e.Agent)
		writeChannel(r, "channel", e.Channel)
		r.str("reason", string(e.Reason))
		r.str("code", e.Code)
		writeTried(r, e.Tried)
		a.failovers(r, e.Failovers)
		a.say("give up on ").ch(e.Channel).say(": ", string(e.Reason), " (", e.Code, ")")
		for i, t := range e.Tried {
			sep := ", "
			if i == 0 {
				sep = "; tried "
			}
			a.say(sep).ch(t.Channel).say(" (", t.Code, ")")
		}
		info.hostTurn, info.notice = true, true
	case policy.Spilled:
		r.str("type", "spill")
		r.str("agent", e.Agent)
		writeChannel(r, "from", e.From)
		writeChannel(r, "to", e.To)
		r.str("code", e.Code)
		r.int("failures", int64(e.Failures))
		a.say("spill ").ch(e.From).say(" -> ").ch(e.To).say(" after ").num(int64(e.Failures)).say(" failures (", e.Code, ")")
	case policy.SkippedTooSmall:
		r.str("type", "skipped-too-small")
		r.str("agent", e.Agent)
		writeChannel(r, "channel", e.Channel)
		r.int("contextTokens", e.ContextTokens)
		r.int("contextWindow", e.ContextWindow)
		r.int("usable", e.Usable)
		a.ch(e.Channel).say(" skipped for ", e.Agent, ": ").num(e.ContextTokens).say(" context tokens, window ").
			num(e.ContextWindow).say(" (").num(e.Usable).say(" usable)")
	case policy.WaitCut:
		r.str("type", "wait-cut")
		r.str("agent", e.Agent)
		writeChannel(r, "channel", e.Channel)
		a.say("wait of ", e.Agent, " cut: ").ch(e.Channel).say(" is usable again")
	case policy.Unroutable:
		r.str("type", "unroutable")
		r.strings("keys", e.Keys)
		writeChannel(r, "channel", e.Channel)
		r.str("code", e.Code)
		a.say("dsh-resilience: ").keys(e.Keys).say(" (").ch(e.Channel).say(") cannot be served by this host (", e.Code, "): it is never failed over to")
		return auditLine{level: "warn"}
	case policy.Routable:
		r.str("type", "routable")
		r.strings("keys", e.Keys)
		writeChannel(r, "channel", e.Channel)
		a.keys(e.Keys).say(" (").ch(e.Channel).say(") can be served again")
	case policy.Stalled:
		r.str("type", "stall")
		writeChannel(r, "route", e.Channel)
		if e.Purpose != "" {
			r.str("purpose", e.Purpose)
		}
		r.str("bound", string(e.Bound))
		r.int("silenceMs", e.SilenceMs)
		r.int("limitMs", e.LimitMs)
		r.int("chunks", e.Chunks)
		a.say("stalled stream cut on ").ch(e.Channel).say(": no output for ").num(e.SilenceMs).say(" ms (", string(e.Bound),
			" limit ").num(e.LimitMs).say(" ms)")
	case policy.Hedged:
		// policy/hedge.go: who won, what it saved, what the loser cost so far.
		r.str("type", "hedge")
		hedgedFields(r, e)
		a.say("hedge ").ch(e.From).say(" -> ").ch(e.To).say(" after ").num(e.AfterMs).say(" ms: ")
		if e.Winner == policy.WinnerNone {
			a.say("no winner, ")
		} else {
			a.say(string(e.Winner), " won")
		}
		a.say(e.End, " (loser waited ").num(e.LoserWaitMs).say(" ms)")
	case policy.SlowChanged:
		// The slow-call breaker (policy/slow.go): slow, its half-open probe, closed by a fast call.
		r.str("type", slowType(e.To))
		writeChannel(r, "channel", e.Channel)
		r.str("from", string(e.From))
		if e.Agent != "" {
			r.str("agent", e.Agent) // a probe let through or gone: no call decided it
		} else {
			r.int("firstTokenMs", e.FirstTokenMs)
		}
		r.int("estimateMs", e.EstimateMs)
		r.int("limitMs", e.LimitMs)
		r.int("calls", int64(e.Calls))
		a.say("slow-call breaker ").ch(e.Channel).say(": ", string(e.From), " -> ", string(e.To), " (first token ")
		if e.Agent != "" {
			a.say("-")
		} else {
			a.num(e.FirstTokenMs)
		}
		a.say(" ms, estimate ").num(e.EstimateMs).say(" ms, limit ").num(e.LimitMs).say(" ms)")
	case policy.ToolRetried: // tool, call, attempt, outcome, reason, delay; no arguments or output
		r.str("type", toolType(e.Outcome))
		r.str("tool", e.Tool)
		r.str("call", e.Call)
		if e.Agent != "" {
			r.str("agent", e.Agent)
		}
		r.int("attempt", int64(e.Attempt))
		reason := "ok"
		if e.Cause != "" {
			r.str("reason", string(e.Cause))
			reason = string(e.Cause)
		}
		r.int("delayMs", e.DelayMs)
		a.say("tool ", e.Tool, " (", e.Call, "): ", string(e.Outcome), " after attempt ").num(int64(e.Attempt)).say(" (", reason, ")")
	case policy.QuotaWait:
		r.str("type", waitType(e.Phase))
		r.str("agent", e.Agent)
		r.str("provider", e.Provider)
		if e.Pool != "" {
			r.str("pool", e.Pool)
		}
		if e.Reason != "" {
			r.str("reason", string(e.Reason))
		}
		r.int("attempts", int64(e.Attempts))
		if e.Phase != policy.WaitLeft {
			a.isoTime(r, "nextAttemptAt", e.NextAttemptAtMs)
		}
		a.say("quota wait ", string(e.Phase), " for ", e.Agent, " on ", e.Provider, " (").num(int64(e.Attempts)).say(" attempts)")
		info.notice = e.Phase == policy.WaitEntered
	case policy.QuotaRouted:
		r.str("type", "quota-routed")
		writeRouted(r, e)
		return auditLine{}
	case policy.QuotaSession:
		r.str("type", "quota-session")
		r.str("agent", e.Agent)
		r.boolean("enabled", e.Enabled)
		r.str("enabledSource", string(e.EnabledSource))
		if e.Pool != "" {
			r.str("pool", e.Pool)
		}
		r.str("poolSource", string(e.PoolSource))
		if !e.Route.Channel.IsZero() {
			writeRoute(r, "route", e.Route)
		}
		return auditLine{}
	default:
		panic(fmt.Sprintf("codec: effect %T has no audit record and is not named in notAudited", fx))
	}
	return info
}

// The record types chosen by a state, an outcome or a phase: each spelled
// out whole, as docs/audit.md lists them.

func circuitType(to policy.CircuitState) string {
	switch to {
	case policy.Open:
		return "circuit-open"
	case policy.HalfOpen:
		return "circuit-half-open"
	}
	return "circuit-closed"
}

func slowType(to policy.SlowState) string {
	switch to {
	case policy.Slow:
		return "slow"
	case policy.SlowHalfOpen:
		return "slow-probe"
	}
	return "slow-closed"
}

func toolType(o policy.ToolOutcome) string {
	switch o {
	case policy.ToolRetry:
		return "tool-retry"
	case policy.ToolAttemptsExhausted:
		return "tool-exhausted"
	case policy.ToolSucceeded:
		return "tool-recovered"
	}
	return "tool-failed"
}

func waitType(p policy.WaitPhase) string {
	switch p {
	case policy.WaitEntered:
		return "quota-wait-entered"
	case policy.WaitWaiting:
		return "quota-wait-waiting"
	}
	return "quota-wait-left"
}

// failovers adds a failover or give-up's count, and the bound it is counted
// against, when the agent had failed over.
func (a *auditor) failovers(r *writer, n int) {
	if n <= 0 {
		return
	}
	r.int("failovers", int64(n))
	r.int("maxFailovers", int64(a.maxFailovers()))
}

// The log line's parts, escaped as they are added (no "provider/model" or
// number made a string first), each call storing the line once (writer).

// say appends parts to the log line.
func (a *auditor) say(parts ...string) *auditor {
	b := a.text
	for _, p := range parts {
		b = appendText(b, p)
	}
	a.text = b
	return a
}

// ch appends "provider/model".
func (a *auditor) ch(c policy.Channel) *auditor { a.text = appendChannelText(a.text, c); return a }

func (a *auditor) num(n int64) *auditor { a.text = appendInt(a.text, n); return a }

// keys names the config keys of a target, or "a target" when none does.
func (a *auditor) keys(keys []string) *auditor {
	start := len(a.text)
	for i, k := range keys {
		if i > 0 {
			a.say(", ")
		}
		a.say(k)
	}
	if len(a.text) == start {
		a.say("a target")
	}
	return a
}

func appendChannelText(b []byte, c policy.Channel) []byte {
	return appendText(append(appendText(b, c.Provider), '/'), c.Model)
}

// channelText writes a channel as "provider/model" text: for a `return`
// record, whose channels the webhook and telemetry contracts document so.
func (w *writer) channelText(k memberKey, c policy.Channel) {
	b := append(w.keyed(w.b, k), '"')
	w.b = append(appendChannelText(b, c), '"')
}

// isoTime writes a time as JavaScript's Date.toISOString does; nothing when
// it is beyond a JavaScript date (a record without it is still the record).
// Digit by digit: time.AppendFormat reads its layout on every call, 1.6 µs
// of a record in wasm against 0.2 µs so (a quota wait's record has one).
func (a *auditor) isoTime(r *writer, k memberKey, ms int64) {
	const maxDateMs = 8.64e15
	if ms > maxDateMs || ms < -maxDateMs {
		return
	}
	t := time.UnixMilli(ms).UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	b := append(r.keyed(r.b, k), '"')
	if y < 0 || y > 9999 {
		// Outside four digits, a sign and six digits (ECMAScript's expanded years).
		sign := byte('+')
		if y < 0 {
			sign, y = '-', -y
		}
		b = appendDigits(append(b, sign), y, 6)
	} else {
		b = appendDigits(b, y, 4)
	}
	b = appendDigits(append(b, '-'), int(mo), 2)
	b = appendDigits(append(b, '-'), d, 2)
	b = appendDigits(append(b, 'T'), h, 2)
	b = appendDigits(append(b, ':'), mi, 2)
	b = appendDigits(append(b, ':'), s, 2)
	b = appendDigits(append(b, '.'), t.Nanosecond()/1e6, 3)
	r.b = append(b, 'Z', '"')
}

// appendDigits appends n, 0 <= n < 10^width, as width digits.
func appendDigits(b []byte, n, width int) []byte {
	start := len(b)
	b = append(b, "000000"[:width]...)
	for i := len(b) - 1; i >= start && n > 0; i-- {
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return b
}
