// Package telemetry maps an audit record to the operational record the
// host's telemetry seam takes (`sessionTelemetry.emit`): which record types
// are alerting signals, at which severity, and the attributes a collector
// filters on. One record in, one record out: it maps fields the record
// already holds (channels, codes, classes, reasons, timings), never prompt
// text or credentials, and infers nothing.
//
// It is pure, like the policy: the shim reads the service, hands each record
// of these types over, and emits the answer with the record as its body.
package telemetry

import (
	"math"
	"sort"
	"time"

	"github.com/tidwall/gjson"
)

// Severity is how loud a record is to a collector.
type Severity string

const (
	Info  Severity = "info"
	Warn  Severity = "warn"
	Error Severity = "error"
)

// Severities are the audit record types that reach telemetry: a give-up is
// what an operator is paged for, an open breaker a warning, every other
// decision a trace of what the plugin did.
var Severities = map[string]Severity{
	"circuit-open":       Warn,
	"circuit-half-open":  Info,
	"circuit-closed":     Info,
	"failover":           Info,
	"return":             Info,
	"retry":              Info, // a wait on the same channel
	"give-up":            Error,
	"spill":              Info, // a request's next attempt sent at once to the next target (spillAfter)
	"quota-routed":       Info, // a spill to another route of the pool
	"quota-wait-entered": Info,
	"quota-wait-waiting": Info,
	"quota-wait-left":    Info,
	"tool-retry":         Info,
	"tool-exhausted":     Info,
	"tool-recovered":     Info,
	"tool-failed":        Info,
	"stall":              Info,
	"slow":               Info,
	"slow-probe":         Info,
	"slow-closed":        Info,
	"hedge":              Info, // a request slow to its first token also sent to the failover target
}

// Types are the types of Severities, sorted: the shim asks the module about
// records of these types only (policy-defaults.js, generated from here).
func Types() []string {
	out := make([]string, 0, len(Severities))
	for t := range Severities {
		out = append(out, t)
	}
	sort.Strings(out)
	return out
}

// OpPrefix starts the seam's operation attribute, `telemetry.op`: receivers
// filter on it (the host's own operations are agent-error and shutdown).
const OpPrefix = "dsh-resilience."

// scalars are the fields copied as they are, under the attribute name a
// collector filters on, in the order they are written.
var scalars = []struct{ field, name string }{
	{"code", "error.code"},
	{"class", "error.class"},
	{"reason", "resilience.reason"},
	{"cause", "resilience.cause"},
	{"from", "circuit.from"}, // a breaker's previous state; channels are mapped apart
	{"openUntil", "circuit.open_until"},
	{"attempt", "resilience.attempt"},
	{"attempts", "resilience.attempts"},
	{"failures", "resilience.failures"},
	{"delayMs", "resilience.delay_ms"},
	{"pool", "quota.pool"},
	{"provider", "quota.provider"},
	{"nextAttemptAt", "quota.next_attempt_at"},
	{"tool", "tool.name"},
	{"call", "tool.call_id"},
	{"bound", "stall.bound"},
	{"silenceMs", "stall.silence_ms"},
	{"limitMs", "stall.limit_ms"},
	{"chunks", "stall.chunks"},
	{"purpose", "stall.purpose"},
	{"winner", "hedge.winner"},
	{"end", "hedge.end"},
	{"afterMs", "hedge.after_ms"},
	{"loserWaitMs", "hedge.loser_wait_ms"},
	{"savedMs", "hedge.saved_ms"},
}

// Attr is one attribute: a string, or a number as the record wrote it.
type Attr struct {
	Key    string
	Value  string
	Number bool
}

// Record is the seam record a record means, but its body (the record
// itself, without its time) and its channel ("ops"), which the shim adds.
type Record struct {
	TimeMs   int64
	Severity Severity
	Attrs    []Attr
}

// Of is the seam record rec (an audit record as written, with its `at`)
// means; false for a type that is no alerting signal. nowMs is its time when
// it has no readable `at`.
func Of(rec gjson.Result, nowMs int64) (Record, bool) {
	typ := rec.Get("type")
	severity, ok := Severities[typ.Str]
	if !ok || typ.Type != gjson.String {
		return Record{}, false
	}
	out := Record{TimeMs: nowMs, Severity: severity}
	if t, err := time.Parse(time.RFC3339Nano, rec.Get("at").Str); err == nil {
		out.TimeMs = t.UnixMilli()
	}
	add := func(k, v string, number bool) { out.Attrs = append(out.Attrs, Attr{k, v, number}) }
	add("telemetry.op", OpPrefix+typ.Str, false)
	add("resilience.type", typ.Str, false)
	// The host requires an agent's id to equal its session's id. An id is a
	// string (a number is read as its text); anything else names no session.
	if a := rec.Get("agent"); a.Type == gjson.String || a.Type == gjson.Number {
		id := a.Str
		if a.Type == gjson.Number {
			id = a.Raw
		}
		add("session.id", id, false)
		add("agent.id", id, false)
	}
	ch := rec.Get("channel")
	if !ch.Exists() || ch.Type == gjson.Null {
		ch = rec.Get("route") // a stall names its route
	}
	channel("channel", ch, add)
	// A return's and a spill's `from` is channel text; a breaker's is its previous state.
	if from := rec.Get("from"); isChannel(from) || typ.Str == "return" || typ.Str == "spill" {
		channel("from", from, add)
	}
	channel("to", rec.Get("to"), add)
	circuit := len(typ.Str) > 8 && typ.Str[:8] == "circuit-"
	for _, s := range scalars {
		if s.field == "from" && !circuit {
			continue
		}
		scalar(s.name, rec.Get(s.field), add)
	}
	scalar("turn", numberOnly(rec.Get("turn")), add)
	scalar("step", numberOnly(rec.Get("step")), add)
	return out, true
}

func isChannel(c gjson.Result) bool { return c.IsObject() && c.Get("provider").Type == gjson.String }

// channel maps a channel under prefix: an object's provider and model, or
// the "provider/model" text some records hold.
func channel(prefix string, c gjson.Result, add func(string, string, bool)) {
	switch {
	case isChannel(c):
		add(prefix+".provider", c.Get("provider").Str, false)
		if m := c.Get("model"); m.Type == gjson.String {
			add(prefix+".model", m.Str, false)
		}
	case c.Type == gjson.String && c.Str != "":
		add(prefix, c.Str, false)
	}
}

// scalar copies a string or a number; anything else is no attribute.
func scalar(name string, v gjson.Result, add func(string, string, bool)) {
	switch v.Type {
	case gjson.String:
		add(name, v.Str, false)
	case gjson.Number:
		if !math.IsInf(v.Num, 0) { // JSON's 1e999: no number a collector can hold
			add(name, v.Raw, true)
		}
	}
}

func numberOnly(v gjson.Result) gjson.Result {
	if v.Type != gjson.Number {
		return gjson.Result{}
	}
	return v
}
