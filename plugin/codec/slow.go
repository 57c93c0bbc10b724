package codec

import (
	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The wire forms of the slow-call breaker (policy/slow.go): the row's `slow`
// object, the `slow` effect and the snapshot's `slow` list, as
// wit/policy.wit declares them. Its sample rides on `stream-check`
// (first-token-ms, stall.go).

// slow reads the row's `slow` object.
func (d *decoder) slow(v gjson.Result, path string) policy.SlowConfig {
	c := policy.DefaultSlowConfig()
	if !present(v) || !d.object(v, path, "firstTokenMs", "minCalls", "moveRunning") {
		return c
	}
	if n, ok := d.uint(v.Get("firstTokenMs"), join(path, "firstTokenMs"), false, maxMs); ok {
		c.FirstTokenMs = int64(n)
	}
	if n, ok := d.uint(v.Get("minCalls"), join(path, "minCalls"), false, 1_000_000); ok {
		c.MinCalls = int(n)
	}
	if m := v.Get("moveRunning"); present(m) {
		c.MoveRunning = d.boolean(m, join(path, "moveRunning"))
	}
	return c
}

// writeSlowConfig echoes the resolved `slow` object, every field spelled out.
func writeSlowConfig(w *writer, c policy.SlowConfig) {
	w.beginObject("slow")
	w.int("firstTokenMs", c.FirstTokenMs)
	w.int("minCalls", int64(c.MinCalls))
	w.boolean("moveRunning", c.MoveRunning)
	w.endObject()
}

// writeSlowChanged writes the `slow` effect (slow-effect).
func writeSlowChanged(w *writer, e policy.SlowChanged) {
	w.str("kind", "slow")
	writeChannel(w, "channel", e.Channel)
	w.str("from", string(e.From))
	w.str("to", string(e.To))
	if e.Agent != "" {
		w.str("agent", e.Agent) // a probe let through or gone: no call decided it
	} else {
		w.int("firstTokenMs", e.FirstTokenMs)
	}
	w.int("estimateMs", e.EstimateMs)
	w.int("limitMs", e.LimitMs)
	w.int("calls", int64(e.Calls))
}

// writeSlowHealth writes the snapshot's `slow` list (slow-health), when any channel was measured.
func writeSlowHealth(w *writer, hs []policy.SlowHealth) {
	if len(hs) == 0 {
		return
	}
	w.beginArray("slow")
	for _, h := range hs {
		w.beginObject("")
		writeChannel(w, "channel", h.Channel)
		w.str("state", string(h.State))
		w.int("firstTokenMs", h.FirstTokenMs)
		if h.UntilMs > 0 {
			w.int("untilMs", h.UntilMs)
		}
		w.endObject()
	}
	w.endArray()
}
