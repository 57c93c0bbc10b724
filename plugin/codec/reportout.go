package codec

import "github.com/dsh-resilience/dsh-resilience/policy/report"

// writeReport writes the report as wit/policy.wit's `report` maps it, the
// shape the shim's renderers read.
func writeReport(w *writer, r report.Report) {
	w.beginObject("")
	w.int("fromMs", r.FromMs)
	w.int("toMs", r.ToMs)
	w.int("logs", int64(r.Logs))
	w.int("records", int64(r.Records))
	w.int("skipped", int64(r.Skipped))
	w.beginArray("incidents")
	for _, inc := range r.Incidents {
		writeIncident(w, inc)
	}
	w.endArray()
	w.beginArray("channels")
	for _, c := range r.Channels {
		writeReportChannel(w, c)
	}
	w.endArray()
	w.beginArray("giveUps")
	for _, g := range r.GiveUps {
		w.beginObject("")
		w.int("at", g.At)
		optStr(w, "agent", g.Agent)
		optStr(w, "channel", g.Channel)
		optStr(w, "reason", g.Reason)
		optStr(w, "code", g.Code)
		w.beginArray("tried")
		for _, t := range g.Tried {
			w.beginObject("")
			w.str("channel", t.Channel)
			w.str("code", t.Code)
			w.int("count", int64(t.Count))
			w.endObject()
		}
		w.endArray()
		w.endObject()
	}
	w.endArray()
	w.beginArray("probes")
	for _, p := range r.Probes {
		w.beginObject("")
		w.int("at", p.At)
		w.str("channel", p.Channel)
		w.boolean("ok", p.OK)
		optStr(w, "code", p.Code)
		w.endObject()
	}
	w.endArray()
	w.beginObject("totals")
	w.int("incidents", int64(r.Totals.Incidents))
	w.int("failovers", int64(r.Totals.Failovers))
	w.int("sessions", int64(r.Totals.Sessions))
	w.int("stockTurnsFailed", int64(r.Totals.StockTurnsFailed))
	w.int("giveUps", int64(r.Totals.GiveUps))
	if r.Totals.Hedges > 0 { // absent without hedges, as the WIT's options say
		w.int("hedges", int64(r.Totals.Hedges))
		w.int("hedgesWon", int64(r.Totals.HedgesWon))
		w.int("hedgeSavedMs", r.Totals.HedgeSavedMs)
	}
	w.endObject()
	w.endObject()
}

func writeIncident(w *writer, inc report.Incident) {
	w.beginObject("")
	w.str("channel", inc.Channel)
	w.int("start", inc.Start)
	optTime(w, "end", inc.End)
	w.int("durationMs", inc.DurationMs)
	w.boolean("ongoing", inc.Ongoing)
	w.str("cause", inc.Cause)
	w.str("class", inc.Class)
	w.strings("codes", inc.Codes)
	w.boolean("seenOpening", inc.SeenOpening)
	w.int("sessions", int64(inc.Sessions))
	w.int("failovers", int64(inc.Failovers))
	w.int("failedRequests", int64(inc.FailedRequests))
	w.int("failedProbes", int64(inc.FailedProbes))
	w.int("lostMs", inc.LostMs)
	s := inc.Stock
	w.beginObject("stock")
	w.str("code", s.Code)
	w.int("retries", int64(s.Retries))
	w.int("budgetMs", s.BudgetMs)
	optStr(w, "why", s.Why)
	w.int("turnsFailed", int64(s.TurnsFailed))
	w.int("turnsHit", int64(s.TurnsHit))
	w.int("turnsUndecided", int64(s.TurnsUndecided))
	w.endObject()
	w.endObject()
}

func writeReportChannel(w *writer, c report.Channel) {
	w.beginObject("")
	w.str("channel", c.Channel)
	w.boolean("providerWide", c.ProviderWide)
	w.int("requests", int64(c.Requests))
	w.int("failures", int64(c.Failures))
	w.num("availability", c.Availability)
	w.int("ttftCount", int64(c.TTFTCount))
	if c.TTFTP50Ms != nil {
		w.num("ttftP50Ms", *c.TTFTP50Ms)
		w.num("ttftP95Ms", *c.TTFTP95Ms)
	}
	w.beginArray("spans")
	for _, s := range c.Spans {
		w.beginObject("")
		w.str("state", s.State)
		w.int("start", s.Start)
		optTime(w, "end", s.End)
		w.endObject()
	}
	w.endArray()
	w.beginArray("failovers")
	for _, f := range c.Failovers {
		w.beginObject("")
		w.int("at", f.At)
		optStr(w, "to", f.To)
		optStr(w, "code", f.Code)
		optStr(w, "agent", f.Agent)
		w.endObject()
	}
	w.endArray()
	w.endObject()
}

// optStr writes an option<string> member, leaving it out when absent.
func optStr(w *writer, k memberKey, s *string) {
	if s != nil {
		w.str(k, *s)
	}
}

// optTime writes an option<s64> member that is null while it is not known
// yet (an incident or span still open): the renderers test it for null.
func optTime(w *writer, k memberKey, t *int64) {
	if t == nil {
		w.key(k)
		w.b = append(w.b, "null"...)
		return
	}
	w.int(k, *t)
}
