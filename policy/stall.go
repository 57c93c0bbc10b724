package policy

import "strconv"

// Stalled streams. A provider that accepts a streaming call and then says
// nothing holds the task for the adapter's own idle timeout (300 s by
// default, per attempt, and not settable per request). The policy decides
// when a call's silence has become a stall and which limit applies; the shim
// owns the timers and the stream, and asks again (StreamCheck) whenever a
// wake-up it was given comes due.

// Stall defaults. Both bound silence the shim can see: stream chunks. SSE
// keep-alive comments never reach an llm/stream listener, so a provider that
// is queueing the request (DeepSeek sends only `: keep-alive` until inference
// starts, for up to 10 minutes under load) looks exactly like a hung one.
const (
	// DefaultStallFirstChunkMs bounds the wait for a call's first chunk. It
	// must outlast a long prefill (tens of seconds for a context near the
	// window) and models that think without streaming it (OpenAI's reasoning
	// models through chat completions, Gemini without thought summaries: one
	// to two minutes at high effort). A false cut here repeats on every retry,
	// since the same model thinks as long again, so the bound errs long:
	// still well under the adapters' 300 s, and it closes the connection.
	DefaultStallFirstChunkMs = 180_000
	// DefaultStallIdleMs bounds the silence between two chunks. Once a model
	// streams, it decodes continuously (tens of tokens a second, reasoning
	// included for DeepSeek and Anthropic), so a minute and a half without a
	// token is a dead stream, with room left for a buffering proxy or a model
	// thinking silently between its text and a tool call.
	DefaultStallIdleMs = 90_000

	// minStallMs: a shorter limit is a typo, not a policy (timer and event
	// loop jitter alone are milliseconds).
	minStallMs = 100
	// maxStallMs: a day; beyond it a bound means nothing for a model call.
	maxStallMs = 24 * 3600 * 1000
)

// StallCode is the failure code a cut call ends with: the host's own code for
// a timed-out call. dsh-llm-retry retries it by default and Classify counts it
// transient, so a stall is retried or failed over like any other timeout.
const StallCode = "TIMEOUT"

// StallCause is the cause of a breaker opened by a stall cut (burst.go).
const StallCause = "stall"

// The purposes the host names its auxiliary calls by (GenerateOptions.purpose).
// The agent loop's own calls have none.
const (
	PurposeCompaction   = "compaction"
	PurposeSessionTitle = "session-title"
)

// StallLimits bounds the silence of one kind of call. A zero turns that bound off.
type StallLimits struct {
	// FirstChunkMs: from the call's start to its first chunk.
	FirstChunkMs int64
	// IdleMs: from one chunk to the next.
	IdleMs int64
}

// StallConfig holds the limits per kind of call. The embedded limits apply
// to the agent loop's calls and to any purpose this version does not know;
// the codec fills a purpose's unset limits from them.
type StallConfig struct {
	StallLimits
	Compaction   StallLimits
	SessionTitle StallLimits
	// TripOnCut opens a channel at its first cut when there is somewhere else
	// to go (burst.go, tripOnStall). Default true.
	TripOnCut bool
}

// DefaultStallConfig bounds every kind of call by the defaults.
func DefaultStallConfig() StallConfig {
	d := StallLimits{FirstChunkMs: DefaultStallFirstChunkMs, IdleMs: DefaultStallIdleMs}
	return StallConfig{StallLimits: d, Compaction: d, SessionTitle: d, TripOnCut: true}
}

// For returns the limits of a call with the given purpose, and the config key
// they come from (for messages that tell the operator what to change).
func (c StallConfig) For(purpose string) (StallLimits, string) {
	switch purpose {
	case PurposeCompaction:
		return c.Compaction, "stall.purposes.compaction"
	case PurposeSessionTitle:
		return c.SessionTitle, "stall.purposes.sessionTitle"
	}
	return c.StallLimits, "stall"
}

func (c StallConfig) validate() error {
	for _, p := range []string{"", PurposeCompaction, PurposeSessionTitle} {
		l, key := c.For(p)
		for _, b := range []struct {
			name string
			ms   int64
		}{{"firstChunkMs", l.FirstChunkMs}, {"idleMs", l.IdleMs}} {
			if b.ms != 0 && (b.ms < minStallMs || b.ms > maxStallMs) {
				return &FieldError{key + "." + b.name, "must be 0 (off) or between 100 and 86400000 (one day)"}
			}
		}
	}
	return nil
}

// StallBound names the silence a limit measures.
type StallBound string

const (
	// FirstChunk: the call has produced nothing yet.
	FirstChunk StallBound = "first-chunk"
	// Idle: the call produced chunks, then went quiet.
	Idle StallBound = "idle"
)

// StreamCheck asks whether a streaming model call (llm/stream) has gone quiet
// for too long. The shim sends it when the call opens, when its first chunk
// arrives (the first-chunk bound gives way to the idle bound), and when the
// wake-up of the last Watch verdict comes due. Times are the shim's clock.
type StreamCheck struct {
	Channel Channel
	// Purpose is the call's GenerateOptions.purpose; "" for the agent loop's calls.
	Purpose  string
	OpenedMs int64
	// Chunks is how many chunks arrived so far; LastChunkMs when the shim
	// last began waiting for one after a chunk (a consumer that is slow to
	// ask for the next chunk is not the provider's silence).
	Chunks      int64
	LastChunkMs int64
	// Cancelled: the caller's own signal aborted. That is a cancel, not a stall.
	Cancelled bool
	// FirstToken is set on the one check sent when the first chunk arrived,
	// with FirstTokenMs from the call's start to it: the slow-call breaker's
	// sample (slow.go), measured by the watchdog's own clocks.
	FirstToken   bool
	FirstTokenMs int64
	// Agent is the call's session (GenerateOptions.sessionId) for the agent
	// loop's calls, ReasoningEffort its effort: what a hedge needs (hedge.go).
	Agent           string
	ReasoningEffort string
	// Hedging: a hedge of this call is racing it; it is not hedged again, and
	// its first token comes in the HedgeResult instead.
	Hedging bool
}

func (StreamCheck) isEvent() {}

var _ Event = StreamCheck{}

// The verdicts of a StreamCheck (besides Pass: no bound applies, stop watching).
const (
	// Watch (llm/stream): keep the call under watch and ask again at
	// Verdict.Stall.AtMs; when AtMs is 0, only once the first chunk arrives.
	Watch VerdictKind = "watch"
	// Cut (llm/stream): stop reading, close the connection, and end the call
	// with a failure of Verdict.Stall.Code and .Message.
	Cut VerdictKind = "cut"
)

// StallVerdict is the payload of Watch and Cut.
type StallVerdict struct {
	AtMs    int64  // Watch: when to ask again; 0 for "at the first chunk"
	Code    string // Cut: the failure code
	Message string // Cut: names the silence and the limit
	// Hedge, on a Watch: send the request to Hedge.To now as well (hedge.go).
	Hedge HedgeSend
}

// Stalled reports a cut call: the shell audits it and emits dsh-resilience/stall.
type Stalled struct {
	Channel   Channel
	Purpose   string
	Bound     StallBound
	SilenceMs int64
	LimitMs   int64
	Chunks    int64
}

func (Stalled) isEffect() {}

var _ Effect = Stalled{}

// onStreamCheck decides a StreamCheck. It reads the config and nothing else:
// a call's progress arrives with each check, so no per-call state can leak.
func (s *State) onStreamCheck(now int64, e StreamCheck, fx *[]Effect) Verdict {
	if e.Cancelled {
		return Verdict{Kind: Pass}
	}
	if e.FirstToken && e.Purpose == "" {
		s.onFirstToken(now, e.Channel, e.FirstTokenMs, fx) // slow.go
		s.noteFirstToken(e.Channel, e.FirstTokenMs)        // hedge.go
	}
	lim, key := s.cfg.Stall.For(e.Purpose)
	bound, since, limit, name := FirstChunk, e.OpenedMs, lim.FirstChunkMs, "firstChunkMs"
	if e.Chunks > 0 {
		bound, since, limit, name = Idle, e.LastChunkMs, lim.IdleMs, "idleMs"
	}
	deadline := since + limit
	if limit == 0 || now < deadline {
		return s.watch(now, e, lim, limit, deadline)
	}
	silence := now - since
	*fx = append(*fx, Stalled{Channel: e.Channel, Purpose: e.Purpose, Bound: bound, SilenceMs: silence, LimitMs: limit, Chunks: e.Chunks})
	if bound == FirstChunk && e.Purpose == "" {
		s.onFirstToken(now, e.Channel, silence, fx) // at least this slow: a slow call for slow.go
	}
	s.tripOnStall(now, e.Channel, fx)
	return Verdict{Kind: Cut, Stall: StallVerdict{Code: StallCode, Message: stallMessage(bound, silence, e.Chunks, key+"."+name, limit)}}
}

// watch is the verdict of a call within its bound (deadline; limit 0: none):
// asked again at the bound or at its hedge, whichever comes first, and
// hedged once that is due (hedge.go).
func (s *State) watch(now int64, e StreamCheck, lim StallLimits, limit, deadline int64) Verdict {
	v := Verdict{Kind: Watch}
	if limit > 0 {
		v.Stall.AtMs = deadline
	}
	if at := s.hedgeDeadline(e); at > 0 {
		if now < at {
			if limit == 0 || at < deadline {
				v.Stall.AtMs = at
			}
			return v
		}
		if h, ok := s.hedge(now, e); ok {
			v.Stall.Hedge = h
			return v
		}
	}
	if limit == 0 && !e.Hedging && !(e.Chunks == 0 && (lim.IdleMs > 0 || (s.cfg.slowWatched() && e.Purpose == ""))) {
		// No bound applies (an unbounded first chunk is watched for the idle
		// bound that starts with it, and for the slow-call breaker's sample).
		return Verdict{Kind: Pass}
	}
	return v
}

// stallMessage names the silence first (`no output for 90 s`), then where it
// fell and the key that bounds it, so an operator reading `dsh: TIMEOUT: ...`
// knows what happened and what to tune.
func stallMessage(bound StallBound, silenceMs, chunks int64, key string, limit int64) string {
	where := "since the request was sent"
	if bound == Idle {
		where = "after " + strconv.FormatInt(chunks, 10) + " chunk"
		if chunks != 1 {
			where += "s"
		}
	}
	return "no output for " + seconds(silenceMs) + " " + where + " (dsh-resilience " + key + " is " + strconv.FormatInt(limit, 10) + ")"
}

// seconds renders a duration for people: tenths below ten seconds, whole
// seconds above, rounded to nearest.
func seconds(ms int64) string {
	if ms < 9_950 {
		t := (ms + 50) / 100
		return strconv.FormatInt(t/10, 10) + "." + strconv.FormatInt(t%10, 10) + " s"
	}
	return strconv.FormatInt((ms+500)/1000, 10) + " s"
}
