package report

// The report, as the shim lays it out (host-shim/report.js renderReportText,
// report-html.js, client/report.cjs) and wit/policy.wit declares it
// (`report`). Times are ms since the Unix epoch; a pointer is a field that
// may be absent.

// Report is the whole answer.
type Report struct {
	FromMs    int64      `json:"fromMs"`
	ToMs      int64      `json:"toMs"`
	Logs      int        `json:"logs"`
	Records   int        `json:"records"` // records read and used
	Skipped   int        `json:"skipped"` // lines and records that could not be used
	Incidents []Incident `json:"incidents"`
	Channels  []Channel  `json:"channels"`
	GiveUps   []GiveUp   `json:"giveUps"`
	Probes    []Probe    `json:"probes"`
	Totals    Totals     `json:"totals"`
}

// Incident is one outage of one channel that overlaps the window.
type Incident struct {
	Channel        string   `json:"channel"`
	Start          int64    `json:"start"`
	End            *int64   `json:"end"` // nil: still open at the window's end
	DurationMs     int64    `json:"durationMs"`
	Ongoing        bool     `json:"ongoing"`
	Cause          string   `json:"cause"` // the code that tripped it, or a word (stall, models-open)
	Class          string   `json:"class"`
	Codes          []string `json:"codes"`
	SeenOpening    bool     `json:"seenOpening"`
	Sessions       int      `json:"sessions"`
	Failovers      int      `json:"failovers"`
	FailedRequests int      `json:"failedRequests"`
	FailedProbes   int      `json:"failedProbes"`
	LostMs         int64    `json:"lostMs"`
	Stock          Stock    `json:"stock"`
}

// Stock is what the stock host would have done with the incident.
type Stock struct {
	Code     string  `json:"code"`
	Retries  int     `json:"retries"`
	BudgetMs int64   `json:"budgetMs"`
	Why      *string `json:"why,omitempty"`
	// Of the sessions that met the outage (TurnsHit), how many turns the
	// stock host would have failed: their retries ran out while it lasted.
	// While it is still open, a turn whose budget has not run out yet is
	// undecided, not saved.
	TurnsFailed    int `json:"turnsFailed"`
	TurnsHit       int `json:"turnsHit"`
	TurnsUndecided int `json:"turnsUndecided"`
}

// Channel is one channel's numbers over the window.
type Channel struct {
	Channel      string     `json:"channel"`
	ProviderWide bool       `json:"providerWide"` // a provider breaker's lane (model "*")
	Requests     int        `json:"requests"`
	Failures     int        `json:"failures"`
	Availability float64    `json:"availability"`
	TTFTCount    int        `json:"ttftCount"`
	TTFTP50Ms    *float64   `json:"ttftP50Ms,omitempty"`
	TTFTP95Ms    *float64   `json:"ttftP95Ms,omitempty"`
	Spans        []Span     `json:"spans"`
	Failovers    []Failover `json:"failovers"`
}

// Span is a time the channel was not closed.
type Span struct {
	State string `json:"state"` // open, half-open
	Start int64  `json:"start"`
	End   *int64 `json:"end"`
}

// Failover is a session moved off a channel.
type Failover struct {
	At    int64   `json:"at"`
	To    *string `json:"to,omitempty"`
	Code  *string `json:"code,omitempty"`
	Agent *string `json:"agent,omitempty"`
}

// GiveUp is a failure handed back to the host, with what its session tried
// since its last success.
type GiveUp struct {
	At      int64   `json:"at"`
	Agent   *string `json:"agent,omitempty"`
	Channel *string `json:"channel,omitempty"`
	Reason  *string `json:"reason,omitempty"`
	Code    *string `json:"code,omitempty"`
	Tried   []Tried `json:"tried"`
}

// Tried is one channel and code a session failed with, and how often.
type Tried struct {
	Channel string `json:"channel"`
	Code    string `json:"code"`
	Count   int    `json:"count"`
}

// Probe is one of the plugin's own test requests, settled.
type Probe struct {
	At      int64   `json:"at"`
	Channel string  `json:"channel"`
	OK      bool    `json:"ok"`
	Code    *string `json:"code,omitempty"`
}

// Totals are the headline numbers.
type Totals struct {
	Incidents        int `json:"incidents"`
	Failovers        int `json:"failovers"`
	Sessions         int `json:"sessions"` // a session two outages hit is one session
	StockTurnsFailed int `json:"stockTurnsFailed"`
	GiveUps          int `json:"giveUps"`
	// Hedges (policy/hedge.go): races ended in the window, those the hedge
	// won, and the time those saved by the primary's median first token.
	// Absent when there were none (the row's hedge is off by default).
	Hedges       int   `json:"hedges,omitempty"`
	HedgesWon    int   `json:"hedgesWon,omitempty"`
	HedgeSavedMs int64 `json:"hedgeSavedMs,omitempty"`
}

// channelNumbers are a channel's numbers while the logs are read.
type channelNumbers struct {
	key, provider, model string
	requests, failures   int
	spans                []span
	failovers            []Failover
	ttft                 samples
}

type span struct {
	state      string
	start, end int64
	open       bool // not ended yet
}
