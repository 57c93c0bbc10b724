package codec

import (
	"math"
	"time"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/dsh-resilience/dsh-resilience/policy/jsondepth"
	"github.com/tidwall/gjson"
)

// The `balance-output` export: a balance script's stdout in, the reading
// the module makes of it out (policy.ReadBalance decides; this reads the
// JSON and the time). The shim runs the script and hands the text over, so
// what counts as a reading, a refusal or a missing one is the module's rule,
// not the shim's. Pure: it reads no instance state.

func init() {
	register("balance-output", func(_ *Module, input []byte) ([]byte, error) { return BalanceOutput(input) })
}

// maxBalanceText bounds a script's output: the shim reads at most 64 KiB.
const maxBalanceText = 64 << 10

// balanceDepth bounds how deep the output may nest before it is read: a
// reading is one flat object.
const balanceDepth = 16

// BalanceOutput answers the reading of a script's stdout.
func BalanceOutput(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "input"}
	d.object(v, "", "provider", "text")
	provider := d.str(v.Get("provider"), "provider", true)
	text := d.str(v.Get("text"), "text", true)
	if d.err == nil && len(text) > maxBalanceText {
		d.fail("input.text", "must be at most 64 KiB (the shim reads no more)")
	}
	if d.err != nil {
		return nil, d.err
	}
	r, why := policy.ReadBalance(provider, readBalanceText(text))
	var w writer
	w.beginObject("")
	w.beginObject("reading")
	w.str("provider", r.Provider)
	w.boolean("ok", r.OK)
	if r.OK {
		w.num("remaining", r.Remaining)
		if r.ResetsAtMs > 0 {
			w.int("resetsAtMs", r.ResetsAtMs)
		}
	}
	w.endObject()
	if why != "" {
		w.str("why", why)
	}
	w.endObject()
	return w.b, nil
}

// readBalanceText reads the one documented object: `{"remaining": n,
// "resetsAt"?: time, "error"?: …}`.
func readBalanceText(text string) policy.BalanceOutput {
	var o policy.BalanceOutput
	if jsondepth.TooDeep([]byte(text), balanceDepth) || !gjson.Valid(text) {
		return o
	}
	v := gjson.Parse(text)
	if !v.IsObject() {
		return o
	}
	o.Object = true
	if rem := v.Get("remaining"); rem.Type == gjson.Number {
		if f := rem.Float(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			o.HasRemaining, o.Remaining = true, f
		}
	}
	switch e := v.Get("error"); e.Type {
	case gjson.Null, gjson.False:
	case gjson.String:
		o.Refused = e.Str != ""
	default:
		o.Refused = true // true, a number, an object: the provider said no
	}
	if at := v.Get("resetsAt"); at.Exists() {
		ms, ok := resetsAtMs(at)
		o.ResetsAtMs, o.BadResetsAt = ms, !ok
	}
	return o
}

// resetsAtMs reads resetsAt: an RFC 3339 time, or a date (midnight UTC), at or after the epoch.
func resetsAtMs(at gjson.Result) (int64, bool) {
	if at.Type != gjson.String {
		return 0, false
	}
	for _, layout := range []string{time.RFC3339Nano, time.DateOnly} {
		if t, err := time.Parse(layout, at.Str); err == nil {
			ms := t.UnixMilli()
			return ms, ms >= 0 && ms <= maxMs
		}
	}
	return 0, false
}
