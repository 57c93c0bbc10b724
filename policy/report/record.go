package report

import (
	"bytes"
	"math"
	"time"

	"github.com/dsh-resilience/dsh-resilience/policy/jsondepth"
	"github.com/tidwall/gjson"
)

// What a record is to the report: the few audit types it reads (audit-types.js
// defines them all), each with the fields it uses, typed. Every other type is
// a record too (counted), with nothing to fold.
type kind uint8

const (
	kindOther kind = iota
	kindCircuit
	kindFailover
	kindStall
	kindProbeResult
	kindGiveUp
	kindRequest      // input, decide: an agent's request
	kindStreamCheck  // input, decide: a watched stream opened or spoke
	kindRequestError // input, decide: an agent's request failed
	kindSettled      // input, decide: an agent's turn settled
	kindDisposed     // input, decide: an agent is gone
	kindRestore      // input, restore: health adopted from a file or another host
	kindHedge        // a hedge race ended (policy/hedge.go)
	kindColdPass     // an agent's request went before the module was up (host-shim/cold-start.js)
)

// opt is a field that may be absent (JavaScript's undefined).
type opt[T any] struct {
	v  T
	ok bool
}

func some[T any](v T) opt[T] { return opt[T]{v, true} }

// record is one usable audit line.
type record struct {
	t    int64 // its `at`, in ms
	kind kind
	// circuit: the state moved to (open, half-open, closed); adopted says it
	// was learnt from health, not seen happen.
	state   string
	adopted bool
	// The channel it is about ("provider/model"): a breaker's, a failover's
	// from, a stall's route, a probe's, a stream's; a give-up's (optional);
	// a request's proposed one (optional).
	channel opt[string]
	to      opt[string] // failover
	agent   opt[string]
	sentMs  opt[int64]  // cold-pass: when the request went (its record is written when the module was told)
	code    opt[string] // failover, probe-result, give-up; request-error: the failure's
	reason  opt[string] // give-up
	cause   opt[string] // circuit
	class   opt[string] // circuit
	ok      bool        // probe-result
	// stream-check
	provider    string // also request-error's
	openedMs    float64
	chunks      float64
	lastChunkMs opt[float64]
	retryAfter  opt[float64] // request-error: the provider's Retry-After
	adoptions   []adoption   // restore: the open and half-open channels it names
	winner      opt[string]  // hedge
	savedMs     opt[float64] // hedge: a won hedge's time saved, when the primary was measured
}

// adoption is one open (or half-open) breaker a restore brought in.
type adoption struct {
	channel, state, lastCode string
}

// readLine reads one audit line. blank: nothing there (not a record, not
// skipped); ok false: a line that is no usable record, to be skipped.
func readLine(line []byte) (r record, blank, ok bool) {
	if len(line) > MaxLineBytes {
		return record{}, false, false
	}
	if len(bytes.TrimSpace(line)) == 0 {
		return record{}, true, false
	}
	if jsondepth.TooDeep(line, maxDepth) || !gjson.ValidBytes(line) {
		return record{}, false, false
	}
	v := gjson.ParseBytes(line)
	if !v.IsObject() {
		return record{}, false, false
	}
	typ, at := v.Get("type"), v.Get("at")
	if typ.Type != gjson.String || at.Type != gjson.String {
		return record{}, false, false
	}
	t, err := time.Parse(time.RFC3339Nano, at.Str)
	if err != nil {
		return record{}, false, false
	}
	r = record{t: t.UnixMilli()}
	var d fields
	switch typ.Str {
	case "circuit-open", "circuit-half-open", "circuit-closed":
		r.kind, r.state = kindCircuit, typ.Str[len("circuit-"):]
		r.channel = d.channel(v.Get("channel"), true)
		r.cause, r.class = d.str(v.Get("cause")), d.str(v.Get("class"))
		r.adopted = d.boolean(v.Get("adopted"))
	case "failover":
		r.kind = kindFailover
		r.channel, r.to = d.channel(v.Get("from"), true), d.channel(v.Get("to"), false)
		r.code, r.agent = d.str(v.Get("code")), d.str(v.Get("agent"))
	case "stall":
		r.kind = kindStall
		r.channel = d.channel(v.Get("route"), true)
	case "hedge":
		r.kind = kindHedge
		r.channel, r.to = d.channel(v.Get("from"), true), d.channel(v.Get("to"), true)
		r.winner, r.savedMs = d.str(v.Get("winner")), d.number(v.Get("savedMs"), false)
	case "probe-result":
		r.kind = kindProbeResult
		r.channel = d.channel(v.Get("channel"), true)
		r.ok, r.code = d.boolean(v.Get("ok")), d.str(v.Get("code"))
	case "cold-pass":
		r.kind = kindColdPass
		r.agent = some(d.required(v.Get("agent")))
		if s := v.Get("sentAt"); s.Type == gjson.String {
			if t, err := time.Parse(time.RFC3339Nano, s.Str); err == nil {
				r.sentMs = some(t.UnixMilli())
			}
		}
	case "give-up":
		r.kind = kindGiveUp
		r.agent, r.channel = d.str(v.Get("agent")), d.channel(v.Get("channel"), false)
		r.reason, r.code = d.str(v.Get("reason")), d.str(v.Get("code"))
	case "input":
		switch v.Get("export").Str {
		case "decide":
			d.event(v.Get("event"), &r)
		case "restore":
			d.restore(v.Get("health"), &r)
		}
	}
	return r, false, !d.bad
}

// fields reads a record's fields, noting the first that is missing where
// required or of the wrong type: such a record is skipped whole.
type fields struct{ bad bool }

func present(v gjson.Result) bool { return v.Exists() && v.Type != gjson.Null }

func (d *fields) str(v gjson.Result) opt[string] {
	if !present(v) {
		return opt[string]{}
	}
	if v.Type != gjson.String {
		d.bad = true
		return opt[string]{}
	}
	return some(v.Str)
}

func (d *fields) required(v gjson.Result) string {
	s := d.str(v)
	if !s.ok {
		d.bad = true
	}
	return s.v
}

func (d *fields) number(v gjson.Result, required bool) opt[float64] {
	if !present(v) {
		d.bad = d.bad || required
		return opt[float64]{}
	}
	if v.Type != gjson.Number || math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
		d.bad = true
		return opt[float64]{}
	}
	return some(v.Num)
}

func (d *fields) boolean(v gjson.Result) bool {
	if !present(v) {
		return false
	}
	if v.Type != gjson.True && v.Type != gjson.False {
		d.bad = true
	}
	return v.Type == gjson.True
}

// channel reads a channel as records name it: {provider, model}, or its
// "provider/model" text.
func (d *fields) channel(v gjson.Result, required bool) opt[string] {
	if !present(v) {
		d.bad = d.bad || required
		return opt[string]{}
	}
	if v.Type == gjson.String {
		return some(v.Str)
	}
	p, m := v.Get("provider"), v.Get("model")
	if !v.IsObject() || p.Type != gjson.String || m.Type != gjson.String {
		d.bad = true
		return opt[string]{}
	}
	return some(p.Str + "/" + m.Str)
}

// event reads a decide input's event: the agent events and stream checks.
func (d *fields) event(ev gjson.Result, r *record) {
	if !present(ev) {
		return
	}
	if !ev.IsObject() {
		d.bad = true
		return
	}
	switch d.str(ev.Get("kind")).v {
	case "request":
		r.kind = kindRequest
		r.agent = some(d.required(ev.Get("agent")))
		r.channel = d.channel(ev.Get("proposed"), false)
	case "stream-check":
		r.kind = kindStreamCheck
		c := ev.Get("channel")
		if !c.IsObject() { // a stream is matched to its provider's errors
			d.bad = true
			return
		}
		r.provider = d.required(c.Get("provider"))
		r.channel = some(r.provider + "/" + d.required(c.Get("model")))
		r.openedMs = d.number(ev.Get("openedMs"), true).v
		r.chunks = d.number(ev.Get("chunks"), false).v
		r.lastChunkMs = d.number(ev.Get("lastChunkMs"), false)
	case "request-error":
		r.kind = kindRequestError
		r.agent = some(d.required(ev.Get("agent")))
		r.provider = d.required(ev.Get("provider"))
		f := ev.Get("failure")
		if present(f) && !f.IsObject() {
			d.bad = true
			return
		}
		r.code = d.str(f.Get("code"))
		r.retryAfter = d.number(f.Get("providerRetryAfterMs"), false)
	case "settled", "disposed":
		r.kind = kindSettled
		if ev.Get("kind").Str == "disposed" {
			r.kind = kindDisposed
		}
		r.agent = some(d.required(ev.Get("agent")))
	}
}

// restore reads an adopting restore's health: the breakers it opened.
func (d *fields) restore(h gjson.Result, r *record) {
	r.kind = kindRestore
	if !present(h) {
		return
	}
	cs := h.Get("channels")
	if !h.IsObject() || (present(cs) && !cs.IsArray()) {
		d.bad = true
		return
	}
	n := 0
	cs.ForEach(func(_, c gjson.Result) bool {
		if n++; n > maxAdoptions || !c.IsObject() {
			d.bad = true
			return false
		}
		ch := d.channel(c.Get("channel"), false)
		state := d.str(c.Get("state")).v
		code := d.str(c.Get("lastCode")).v
		if ch.ok && ch.v != "" && (state == "open" || state == "half-open") {
			if code == "" {
				code = "?"
			}
			r.adoptions = append(r.adoptions, adoption{ch.v, state, code})
		}
		return !d.bad
	})
}
