package codec

import (
	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The wire forms of hedged first tokens (policy/hedge.go): the row's `hedge`
// object, the `hedge-result` event, a `watch` verdict's `hedge` and the
// `hedge` effect, as wit/policy.wit declares them. The decision rides on
// `stream-check` (agent, reasoning-effort, hedging).

// hedge reads the row's `hedge` object.
func (d *decoder) hedge(v gjson.Result, path string) policy.HedgeConfig {
	c := policy.DefaultHedgeConfig()
	if !present(v) || !d.object(v, path, "afterMs", "afterPercentile", "minMs", "maxMs", "budgetPercent", "budgetFloor") {
		return c
	}
	if n, ok := d.uint(v.Get("afterMs"), join(path, "afterMs"), false, maxMs); ok {
		c.AfterMs = int64(n)
	}
	if n, ok := d.uint(v.Get("afterPercentile"), join(path, "afterPercentile"), false, 1_000_000); ok {
		c.AfterPercentile = int(n)
	}
	if n, ok := d.uint(v.Get("minMs"), join(path, "minMs"), false, maxMs); ok {
		c.MinMs = int64(n)
	}
	if n, ok := d.uint(v.Get("maxMs"), join(path, "maxMs"), false, maxMs); ok {
		c.MaxMs = int64(n)
	}
	if n, ok := d.uint(v.Get("budgetPercent"), join(path, "budgetPercent"), false, 1_000_000); ok {
		c.BudgetPercent = int(n)
	}
	if n, ok := d.uint(v.Get("budgetFloor"), join(path, "budgetFloor"), false, 1_000_000); ok {
		c.BudgetFloor = int(n)
	}
	return c
}

// writeHedgeConfig echoes the resolved `hedge` object, every field spelled out.
func writeHedgeConfig(w *writer, c policy.HedgeConfig) {
	w.beginObject("hedge")
	w.int("afterMs", c.AfterMs)
	w.int("afterPercentile", int64(c.AfterPercentile))
	w.int("minMs", c.MinMs)
	w.int("maxMs", c.MaxMs)
	w.int("budgetPercent", int64(c.BudgetPercent))
	w.int("budgetFloor", int64(c.BudgetFloor))
	w.endObject()
}

var hedgeResultKeys = []string{"kind", "agent", "winner", "openedMs", "firstTokenMs", "end", "code"}

// hedgeResult reads the WIT record `hedge-result-event`.
func (d *decoder) hedgeResult(e gjson.Result) policy.HedgeResult {
	f, _ := d.fields(e, "event", hedgeResultKeys)
	opened, _ := d.uint(f.get("openedMs"), "event.openedMs", true, maxMs)
	winner := policy.HedgeWinner(d.oneOf(f.get("winner"), "event.winner", true,
		string(policy.WinnerPrimary), string(policy.WinnerHedge), string(policy.WinnerNone)))
	first, hasFirst := d.uint(f.get("firstTokenMs"), "event.firstTokenMs", false, maxMs)
	if winner != policy.WinnerNone && !hasFirst && d.err == nil {
		d.fail("event.firstTokenMs", "is required when a call won")
	}
	end := d.oneOf(f.get("end"), "event.end", winner == policy.WinnerNone, "cut", "cancelled", "primary-ended", "hedge-failed")
	return policy.HedgeResult{
		Agent:        d.str(f.get("agent"), "event.agent", true),
		Winner:       winner,
		OpenedMs:     int64(opened),
		FirstTokenMs: int64(first),
		End:          end,
		Code:         d.str(f.get("code"), "event.code", false),
	}
}

// writeHedgeSend writes a `watch` verdict's `hedge` (hedge-send).
func writeHedgeSend(w *writer, h policy.HedgeSend) {
	w.beginObject("hedge")
	w.str("provider", h.To.Provider)
	w.str("model", h.To.Model)
	if h.DropReasoningEffort {
		w.boolean("dropReasoningEffort", true)
	}
	if h.ReasoningEffort != "" {
		w.str("reasoningEffort", h.ReasoningEffort)
	}
	w.int("afterMs", h.AfterMs)
	w.str("reason", h.Reason)
	w.endObject()
}

// writeHedged writes the `hedge` effect (hedge-effect).
func writeHedged(w *writer, e policy.Hedged) {
	w.str("kind", "hedge")
	hedgedFields(w, e)
}

// hedgedFields are a hedge's, in its effect and in its audit record alike.
func hedgedFields(w *writer, e policy.Hedged) {
	w.str("agent", e.Agent)
	writeChannel(w, "from", e.From)
	writeChannel(w, "to", e.To)
	w.int("afterMs", e.AfterMs)
	w.str("reason", e.Reason)
	w.str("winner", string(e.Winner))
	if e.End != "" {
		w.str("end", e.End)
	}
	if e.Code != "" {
		w.str("code", e.Code)
	}
	if e.Winner != policy.WinnerNone {
		w.int("firstTokenMs", e.FirstTokenMs)
	}
	w.int("loserWaitMs", e.LoserWaitMs)
	if e.SavedMs >= 0 {
		w.int("savedMs", e.SavedMs)
	}
}
