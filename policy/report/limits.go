package report

// The bounds that keep a report's memory flat over a log of any size. Each is
// far above what a real log holds (a week of a busy host: some thousands of
// sessions, hundreds of breaker moves), so a real report is exact; a log that
// exceeds one (a runaway writer, a hostile file) still reports, with the
// list past its bound cut and the reason documented here.
const (
	// MaxLineBytes bounds one audit line. audit.js writes a few hundred
	// bytes a line; a longer line is no record of it, and is skipped whole.
	// The shim cuts a longer line to one byte over this before handing it
	// in, so it never holds a huge line as one string.
	MaxLineBytes = 1 << 20
	// maxDepth bounds how deeply a line may nest (a restore record's
	// health.channels[i].channel is four levels): validation recurses per
	// level, and 10^5 brackets would overflow the guest's stack.
	maxDepth = 32
	// maxChannels bounds the channels a report tracks; a record naming a
	// channel past it still counts, its channel's numbers are not kept.
	maxChannels = 10_000
	// maxListed bounds each listed thing (incidents, give-ups, probes, and
	// per channel its spans and failovers): past it, more happen but are not
	// listed. Their counts in the totals stay exact where they are counters
	// (give-ups); a list past its bound is a picture no one can read anyway.
	maxListed = 10_000
	// maxSessions bounds the sessions one incident (or one channel's run of
	// failures before it opens) remembers: their count and the stock host's
	// turns stop at it.
	maxSessions = 100_000
	// maxCodes bounds the distinct failure codes one incident lists.
	maxCodes = 64
	// maxTried bounds the distinct (channel, code) pairs a give-up lists.
	maxTried = 64
	// maxAgents bounds the sessions followed at once: a session not disposed
	// in the log stays followed, and past this the quarter idle longest is
	// forgotten (a later record of one starts it afresh).
	maxAgents = 1 << 16
	// recentStreams is how many streams per host and channel (and per host
	// and provider) stay open to a later check or error: enough for the calls
	// one host has open at once. A stream past it is final, and its time to
	// first token is folded into its channel's samples.
	recentStreams = 64
	// maxSamples bounds a channel's time-to-first-token samples: past it,
	// every other one is dropped and only every second new one is kept (the
	// stride doubles), so the percentiles come from an even sample.
	maxSamples = 1 << 16
	// maxAdoptions bounds the health records one restore record may hold, as
	// the module's own restore does (plugin/codec/module.go).
	maxAdoptions = 10_000
)
