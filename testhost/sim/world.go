package sim

import (
	"fmt"
	"time"
)

// failure is a model request's failure as agent/request-error carries it.
type failure struct {
	Code         string
	Message      string
	Status       int
	RetryAfterMs int64
	latencyMs    int64 // how long the request took to fail
}

func (f failure) append(b []byte) []byte {
	b = append(b, `{"code":`...)
	b = appendStr(b, f.Code)
	if f.Message != "" {
		b = append(b, `,"message":`...)
		b = appendStr(b, f.Message)
	}
	if f.Status != 0 {
		b = fmt.Appendf(b, `,"status":%d`, f.Status)
	}
	if f.RetryAfterMs > 0 {
		b = fmt.Appendf(b, `,"providerRetryAfterMs":%d`, f.RetryAfterMs)
	}
	return append(b, '}')
}

// hostRetryable is dsh-llm-retry's stock policy: normal mode, two retries of these codes.
var hostRetryable = []string{"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "EMPTY_RESPONSE"}

const hostRetryJSON = `{"mode":"normal","maxRetries":2,"retryableCodes":["RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT","EMPTY_RESPONSE"]}`

func hostRetries(code string) bool {
	for _, c := range hostRetryable {
		if c == code {
			return true
		}
	}
	return false
}

// outage finds the outage that governs ch at the current time: the earliest
// started of those active. Overlaps are normal; the first one wins.
func (r *runner) outage(ch Channel) *Op {
	live := r.active[:0]
	for _, i := range r.active {
		if r.now < r.s.Ops[i].At+r.s.Ops[i].Dur+Epoch {
			live = append(live, i)
		}
	}
	r.active = live
	for _, i := range r.active {
		o := &r.s.Ops[i]
		if o.Ch >= 0 && r.s.Channels[o.Ch] == ch || o.Ch < 0 && o.Prov == ch.Provider {
			return o
		}
	}
	return nil
}

// outcome decides how a request (or probe, when probe) sent to ch now ends:
// ok, a failure, or (hang) no answer at all. d is the request's own draw.
func (r *runner) outcome(ch Channel, d uint64, probe bool) (ok, hang bool, f failure) {
	o := r.outage(ch)
	lat := int64(200 + d%20_000)
	if o == nil {
		if d%100 == 0 { // a background of stray failures
			return false, false, failure{Code: "TRANSPORT", Message: "fetch failed", latencyMs: lat % 3000}
		}
		return true, false, failure{latencyMs: lat}
	}
	fast := lat % 3000
	switch o.Mode {
	case ModeFlaky:
		if d%2 == 0 {
			return true, false, failure{latencyMs: lat}
		}
		fallthrough
	case ModeTransient:
		codes := []failure{{Code: "SERVER", Status: 503, Message: "Service Unavailable"}, {Code: "TIMEOUT"}, {Code: "TRANSPORT", Message: "upstream connect error"}}
		f = codes[d%3]
	case ModeRateLimit:
		f = failure{Code: "RATE_LIMIT", Status: 429, Message: "rate limit exceeded", RetryAfterMs: o.RetryAfterMs}
	case ModeQuota:
		reset := time.UnixMilli(o.At + o.Dur + Epoch).UTC().Format("2006-01-02 15:04:05")
		forms := []failure{
			{Code: "HTTP_402", Status: 402, Message: "Insufficient Balance"},
			{Code: "RATE_LIMIT", Status: 429, Message: "usage limit reached, resets at " + reset + " UTC"},
			{Code: "AUTH", Status: 403, Message: "您的配额已用尽，重置时间 " + reset},
		}
		f = forms[d%3]
	case ModeUnavailable:
		f = failure{Code: "MODEL_NOT_FOUND", Status: 404, Message: "The model `" + ch.Model + "` does not exist"}
	case ModeStall:
		if probe {
			return false, true, f
		}
		f = failure{Code: "TIMEOUT", Message: "no output for 180 s after 0 chunks (dsh-resilience stall.firstChunkMs is 180000)"}
		fast = 180_000
	case ModeProbeHang:
		if probe {
			return false, true, f
		}
		f = failure{Code: "SERVER", Status: 502, Message: "Bad Gateway"}
	case ModeStreamClosed:
		f = failure{Code: "STREAM_CLOSED", Message: "stream closed before the end"}
	}
	f.latencyMs = fast
	return false, false, f
}

// toolFailure is a tool attempt's error for a mode: transient and permanent ones.
func toolFailure(m Mode) (code, msg string) {
	switch m {
	case ModeTransient, ModeFlaky:
		return "", "ECONNRESET: socket hang up"
	case ModeRateLimit:
		return "", "HTTP 429 Too Many Requests"
	case ModeQuota:
		return "", "积分不足"
	case ModeUnavailable:
		return "INVALID_ARGS", "bad arguments"
	case ModeStall:
		return "TOOL_TIMEOUT", "timed out after 30000 ms"
	case ModeProbeHang:
		return "", "HTTP 503 Service Unavailable"
	default:
		return "", "EACCES: permission denied, open 'timeout.log'"
	}
}
