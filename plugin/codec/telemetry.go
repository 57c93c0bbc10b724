package codec

import (
	"github.com/dsh-resilience/dsh-resilience/policy/telemetry"
)

// The `telemetry` export: an audit record in, the host's telemetry seam
// record it means out (policy/telemetry decides: which types, their
// severity, their attributes). Pure: it reads no instance state, so a
// record the shim writes before the module is configured maps the same.

func init() {
	register("telemetry", func(_ *Module, input []byte) ([]byte, error) { return Telemetry(input) })
}

// Telemetry answers the seam record of one audit record, or none.
func Telemetry(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "input"}
	d.object(v, "", "record", "nowMs")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	rec := v.Get("record")
	if d.err == nil && !rec.IsObject() {
		d.fail("record", "must be an object")
	}
	if d.err != nil {
		return nil, d.err
	}
	var w writer
	w.beginObject("")
	if r, ok := telemetry.Of(rec, int64(now)); ok {
		w.beginObject("seam")
		w.int("time", r.TimeMs)
		w.str("severity", string(r.Severity))
		w.beginObject("attributes")
		for _, a := range r.Attrs {
			if a.Number {
				w.b = append(w.keyed(w.b, memberKey(a.Key)), a.Value...)
			} else {
				w.str(memberKey(a.Key), a.Value)
			}
		}
		w.endObject()
		w.endObject()
	}
	w.endObject()
	return w.b, nil
}
