package report

import (
	"math"
	"slices"
	"strings"
)

// codeLike reports whether a cause is a failure code (RATE_LIMIT), not a
// word (stall, models-open, recovered). A loop, not a regular expression:
// the regexp package would live in every policy instance for this one check.
func codeLike(cause string) bool {
	for i := 0; i < len(cause); i++ {
		if c := cause[i]; c != '_' && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return cause != ""
}

// Finish ends the report: every log is taken as ended, what is left is
// folded, and the numbers over the window are answered.
func (a *Accumulator) Finish() Report {
	for i := range a.queues {
		a.queues[i].ended = true
	}
	a.release()
	a.foldOpenStreams()
	from, to := a.minT, a.maxT
	if a.records == 0 {
		from, to = 0, 0
	}
	if a.window.HasFrom {
		from = a.window.FromMs
	}
	if !a.window.HasTo && a.records == 0 {
		to = from
	}
	if a.window.HasTo {
		to = a.window.ToMs
	}
	rep := Report{FromMs: from, ToMs: to, Logs: len(a.queues), Records: a.records, Skipped: a.skipped,
		Incidents: []Incident{}, Channels: []Channel{}, GiveUps: a.giveUps, Probes: a.probes}
	if rep.GiveUps == nil {
		rep.GiveUps = []GiveUp{}
	}
	if rep.Probes == nil {
		rep.Probes = []Probe{}
	}
	sessions := map[string]struct{}{}
	for _, inc := range a.incidents {
		end := to
		if inc.ended {
			end = inc.end
		}
		if inc.start > to || end < from {
			continue
		}
		// A provider breaker opened because its models' breakers did is no
		// outage of its own: its models' incidents hold the numbers, and the
		// timeline shows its span.
		if strings.HasSuffix(inc.channel, "/*") && inc.failedRequests == 0 && !codeLike(inc.cause) {
			continue
		}
		out := incidentOut(inc, end)
		for s := range inc.sessions {
			sessions[s] = struct{}{}
		}
		rep.Incidents = append(rep.Incidents, out)
		rep.Totals.Failovers += out.Failovers
		rep.Totals.StockTurnsFailed += out.Stock.TurnsFailed
	}
	rep.Totals.Incidents = len(rep.Incidents)
	rep.Totals.Sessions = len(sessions)
	rep.Totals.GiveUps = a.giveUpsIn
	rep.Totals.Hedges, rep.Totals.HedgesWon, rep.Totals.HedgeSavedMs = a.hedges, a.hedgesWon, int64(a.hedgeSavedMs)
	spanMs := max(0, to-from)
	for _, c := range a.channels {
		out := Channel{Channel: c.key, ProviderWide: c.model == "*", Requests: c.requests, Failures: c.failures,
			Availability: 1, Spans: []Span{}, Failovers: []Failover{}}
		if spanMs > 0 {
			out.Availability = 1 - float64(a.downMs(c, from, to))/float64(spanMs)
		}
		for _, s := range c.spans {
			if s.start <= to && (s.open || s.end >= from) {
				sp := Span{State: s.state, Start: s.start}
				if !s.open {
					sp.End = &s.end
				}
				out.Spans = append(out.Spans, sp)
			}
		}
		for _, f := range c.failovers {
			if f.At >= from && f.At <= to {
				out.Failovers = append(out.Failovers, f)
			}
		}
		c.ttft.finish(&out, from, to)
		rep.Channels = append(rep.Channels, out)
	}
	slices.SortFunc(rep.Channels, func(x, y Channel) int { return byName(x.Channel, y.Channel) })
	return rep
}

func incidentOut(inc *incident, end int64) Incident {
	code := inc.cause
	switch {
	case inc.cause == "stall":
		code = "TIMEOUT"
	case codeLike(inc.cause):
	case len(inc.codes) > 0:
		code = inc.codes[0]
	}
	stock := stockOutcome(code, inc.hung || inc.cause == "stall", inc.retryAfter)
	// Each affected turn's first contact: the stock host would fail it if the
	// outage outlasted its budget.
	for _, at := range inc.metAt {
		if at+stock.BudgetMs < end {
			stock.TurnsFailed++
		}
	}
	stock.TurnsHit = len(inc.metAt)
	out := Incident{Channel: inc.channel, Start: inc.start, DurationMs: end - inc.start, Ongoing: !inc.ended,
		Cause: inc.cause, Class: inc.class, Codes: slices.Sorted(slices.Values(inc.codes)), SeenOpening: inc.startKnown,
		Sessions: len(inc.sessions), Failovers: inc.failovers, FailedRequests: inc.failedRequests,
		FailedProbes: inc.failedProbes, LostMs: inc.lostMs, Stock: stock}
	if inc.ended {
		e := inc.end
		out.End = &e
	} else {
		out.Stock.TurnsUndecided = stock.TurnsHit - stock.TurnsFailed
	}
	if out.Codes == nil {
		out.Codes = []string{}
	}
	return out
}

// downMs is how long in [from, to] a channel was not closed: the union of
// its spans and its provider breaker's.
func (a *Accumulator) downMs(c *channelNumbers, from, to int64) int64 {
	var parts [][2]int64
	clip := func(spans []span) {
		for _, s := range spans {
			end := to
			if !s.open {
				end = s.end
			}
			if x, y := max(s.start, from), min(end, to); y > x {
				parts = append(parts, [2]int64{x, y})
			}
		}
	}
	clip(c.spans)
	if p := a.channels[c.provider+"/*"]; p != nil {
		clip(p.spans)
	}
	slices.SortStableFunc(parts, func(x, y [2]int64) int { return cmp64(x[0], y[0]) })
	var total int64
	reached := int64(math.MinInt64)
	for _, p := range parts {
		if p[1] <= reached {
			continue
		}
		total += p[1] - max(p[0], reached)
		reached = p[1]
	}
	return total
}

// finish sets a channel's time to first token over the window: its count
// and its 50th and 95th percentiles (the value at that rank, as sorted).
func (sm *samples) finish(out *Channel, from, to int64) {
	var xs []float64
	for _, s := range sm.xs {
		if s.openedMs >= float64(from) && s.openedMs <= float64(to) {
			xs = append(xs, s.ttftMs)
		}
	}
	if len(xs) == 0 {
		return
	}
	slices.Sort(xs)
	at := func(q float64) *float64 {
		v := xs[min(len(xs)-1, int(math.Floor(q*float64(len(xs)))))]
		return &v
	}
	out.TTFTCount = len(xs)
	if sm.stride > 1 { // a sample: scaled back to how many there were
		out.TTFTCount = len(xs) * sm.stride
	}
	out.TTFTP50Ms, out.TTFTP95Ms = at(0.5), at(0.95)
}
