package codec

import (
	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The wire forms of the stall watchdog (policy/stall.go): the config row's
// `stall` object, the `stream-check` event, the `watch` and `cut` verdicts
// and the `stall` effect, as wit/policy.wit declares them.

var stallLimitKeys = []string{"firstChunkMs", "idleMs"}

// stall reads the row's `stall` object. A purpose's absent limits are the
// row's own (`stall.idleMs` bounds compaction too unless
// `stall.purposes.compaction.idleMs` says otherwise), so that one key tunes
// every kind of call and a purpose entry only says how it differs.
func (d *decoder) stall(v gjson.Result, path string) policy.StallConfig {
	c := policy.DefaultStallConfig()
	if !present(v) || !d.object(v, path, append(stallLimitKeys, "purposes", "tripOnCut")...) {
		return c
	}
	if t := v.Get("tripOnCut"); present(t) {
		c.TripOnCut = d.boolean(t, join(path, "tripOnCut"))
	}
	c.StallLimits = d.stallLimits(v, path, c.StallLimits)
	c.Compaction, c.SessionTitle = c.StallLimits, c.StallLimits
	p, pp := v.Get("purposes"), join(path, "purposes")
	if !present(p) || !d.object(p, pp, "compaction", "sessionTitle") {
		return c
	}
	if x := p.Get("compaction"); present(x) && d.object(x, join(pp, "compaction"), stallLimitKeys...) {
		c.Compaction = d.stallLimits(x, join(pp, "compaction"), c.StallLimits)
	}
	if x := p.Get("sessionTitle"); present(x) && d.object(x, join(pp, "sessionTitle"), stallLimitKeys...) {
		c.SessionTitle = d.stallLimits(x, join(pp, "sessionTitle"), c.StallLimits)
	}
	return c
}

func (d *decoder) stallLimits(v gjson.Result, path string, l policy.StallLimits) policy.StallLimits {
	if n, ok := d.uint(v.Get("firstChunkMs"), join(path, "firstChunkMs"), false, maxMs); ok {
		l.FirstChunkMs = int64(n)
	}
	if n, ok := d.uint(v.Get("idleMs"), join(path, "idleMs"), false, maxMs); ok {
		l.IdleMs = int64(n)
	}
	return l
}

// streamCheck reads the WIT record `stream-check-event`.
var streamCheckKeys = []string{"kind", "channel", "purpose", "openedMs", "chunks", "lastChunkMs", "cancelled", "firstTokenMs", "agent", "reasoningEffort", "hedging"}

func (d *decoder) streamCheck(e gjson.Result) policy.StreamCheck {
	f, _ := d.fields(e, "event", streamCheckKeys)
	opened, _ := d.uint(f.get("openedMs"), "event.openedMs", true, maxMs)
	chunks, _ := d.uint(f.get("chunks"), "event.chunks", true, maxMs)
	last, hasLast := d.uint(f.get("lastChunkMs"), "event.lastChunkMs", false, maxMs)
	if chunks > 0 && !hasLast {
		d.fail("event.lastChunkMs", "is required once chunks is above 0")
	}
	first, hasFirst := d.uint(f.get("firstTokenMs"), "event.firstTokenMs", false, maxMs)
	if hasFirst && chunks == 0 {
		d.fail("event.firstTokenMs", "is only sent once chunks is above 0")
	}
	if !present(f.get("cancelled")) {
		d.fail("event.cancelled", "is required")
	}
	hedging := false
	if h := f.get("hedging"); present(h) {
		hedging = d.boolean(h, "event.hedging")
	}
	return policy.StreamCheck{
		Agent:           d.str(f.get("agent"), "event.agent", false),
		ReasoningEffort: d.str(f.get("reasoningEffort"), "event.reasoningEffort", false),
		Hedging:         hedging,
		Channel:         d.channel(f.get("channel"), "event.channel"),
		Purpose:         d.str(f.get("purpose"), "event.purpose", false),
		OpenedMs:        int64(opened),
		Chunks:          int64(chunks),
		LastChunkMs:     int64(last),
		Cancelled:       d.boolean(f.get("cancelled"), "event.cancelled"),
		FirstToken:      hasFirst,
		FirstTokenMs:    int64(first),
	}
}

// writeStallVerdict writes the payload of `watch` (stall-watch) and `cut` (stall-cut).
func writeStallVerdict(w *writer, v policy.Verdict) {
	if v.Kind == policy.Cut {
		w.str("code", v.Stall.Code)
		w.str("message", v.Stall.Message)
		return
	}
	if v.Stall.AtMs > 0 {
		w.int("atMs", v.Stall.AtMs)
	}
	if !v.Stall.Hedge.To.IsZero() {
		writeHedgeSend(w, v.Stall.Hedge)
	}
}

// writeStalled writes the `stall` effect (stall-effect).
func writeStalled(w *writer, e policy.Stalled) {
	w.str("kind", "stall")
	writeChannel(w, "channel", e.Channel)
	if e.Purpose != "" {
		w.str("purpose", e.Purpose)
	}
	w.str("bound", string(e.Bound))
	w.int("silenceMs", e.SilenceMs)
	w.int("limitMs", e.LimitMs)
	w.int("chunks", e.Chunks)
}

// writeStallConfig echoes the resolved limits, every purpose spelled out.
func writeStallConfig(w *writer, c policy.StallConfig) {
	limits := func(k memberKey, l policy.StallLimits) {
		w.beginObject(k)
		w.int("firstChunkMs", l.FirstChunkMs)
		w.int("idleMs", l.IdleMs)
		w.endObject()
	}
	w.beginObject("stall")
	w.int("firstChunkMs", c.FirstChunkMs)
	w.int("idleMs", c.IdleMs)
	w.beginObject("purposes")
	limits("compaction", c.Compaction)
	limits("sessionTitle", c.SessionTitle)
	w.endObject()
	w.boolean("tripOnCut", c.TripOnCut)
	w.endObject()
}
