package codec

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/dsh-resilience/dsh-resilience/policy"
)

// fastStep decodes the hot step inputs (request, request-error, settled,
// disposed, wake) in one pass, when they come in the plain form the host
// writes: no whitespace, no escapes, kind first, integers only, no key twice,
// every required key present. Anything else (including every input that is
// wrong) answers ok=false and goes the general way (parse, decodeStepInput),
// so errors and odd-but-valid input decode exactly as before; whatever it
// accepts, the general way decodes to the same event (fast_test.go checks).
//
// Why: in the guest, decoding was a third of a decision (bench-day's calls
// replayed through wazero, Dec 2026: 11 of 30 µs), spent in gjson's
// validation pass, its pass per object level and a float parse per number.
// One pass that reads only the keys it knows, validating as it goes, is the
// same work done once.
func fastStep(input []byte, hr *hostRetryCache) (int64, policy.Event, bool) {
	// One copy, as gjson takes: the event's strings outlive the call's buffer.
	p := scan{s: string(input), ok: true}
	p.want('{')
	var now uint64
	var ev policy.Event
	var seen uint
	for p.ok {
		switch p.key() {
		case "nowMs":
			p.once(&seen, 1)
			now = p.uint(maxMs)
		case "event":
			p.once(&seen, 2)
			ev = p.event(hr)
		default:
			p.ok = false
		}
		if !p.next() {
			break
		}
	}
	if !p.ok || p.i != len(p.s) || seen != 3 {
		return 0, nil, false
	}
	return int64(now), ev, true
}

// scan reads the plain form; ok turns false at the first thing outside it.
type scan struct {
	s  string
	i  int
	ok bool
}

func (p *scan) want(c byte) {
	if p.ok && p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return
	}
	p.ok = false
}

// once marks a key seen; a key seen twice leaves the plain form (the
// general way decides which of them counts).
func (p *scan) once(seen *uint, bit uint) {
	if *seen&bit != 0 {
		p.ok = false
	}
	*seen |= bit
}

// next consumes the ',' before another member (true) or the object's '}'.
func (p *scan) next() bool {
	if p.ok && p.i < len(p.s) {
		switch p.s[p.i] {
		case ',':
			p.i++
			return true
		case '}':
			p.i++
			return false
		}
	}
	p.ok = false
	return false
}

// str reads a string with no escape and no control byte, in valid UTF-8:
// its text is then the string itself, as gjson would give it.
func (p *scan) str() string {
	p.want('"')
	if !p.ok {
		return ""
	}
	start, ascii := p.i, true
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		if c == '"' {
			v := p.s[start:p.i]
			p.i++
			if !ascii && !utf8.ValidString(v) {
				p.ok = false
			}
			return v
		}
		if c < 0x20 || c == '\\' {
			break
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	p.ok = false
	return ""
}

func (p *scan) key() string {
	k := p.str()
	p.want(':')
	return k
}

// uint reads an integer in JSON's form (no sign, fraction, exponent or
// leading zero) of at most 16 digits and no more than max (<= 2^53, where
// gjson's float reading is still exact).
func (p *scan) uint(max uint64) uint64 {
	start := p.i
	var n uint64
	for ; p.ok && p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9'; p.i++ {
		n = n*10 + uint64(p.s[p.i]-'0')
	}
	digits := p.i - start
	if digits == 0 || digits > 16 || (digits > 1 && p.s[start] == '0') || n > max {
		p.ok = false
	}
	return n
}

func (p *scan) channel() policy.Channel {
	var ch policy.Channel
	var seen uint
	p.want('{')
	for p.ok {
		switch p.key() {
		case "provider":
			p.once(&seen, 1)
			ch.Provider = p.str()
		case "model":
			p.once(&seen, 2)
			ch.Model = p.str()
		default:
			p.ok = false
		}
		if !p.next() {
			break
		}
	}
	p.ok = p.ok && seen == 3
	return ch
}

// event reads the event object, its kind first.
func (p *scan) event(hr *hostRetryCache) policy.Event {
	p.want('{')
	if p.key() != "kind" {
		p.ok = false
		return nil
	}
	var ev policy.Event
	switch p.str() {
	case "request":
		ev = p.request()
	case "request-error":
		ev = p.requestError(hr)
	case "settled":
		ev = policy.Settled{Agent: p.agentOnly()}
	case "disposed":
		ev = policy.Disposed{Agent: p.agentOnly()}
	case "wake":
		p.ok = p.ok && !p.next()
		ev = policy.Wake{}
	default:
		p.ok = false
	}
	return ev
}

func (p *scan) request() policy.Request {
	var r policy.Request
	var seen uint
	for p.next() {
		switch p.key() {
		case "agent":
			p.once(&seen, 1)
			r.Agent = p.str()
		case "proposed":
			p.once(&seen, 2)
			r.Proposed = p.channel()
		case "reasoningEffort":
			p.once(&seen, 4)
			r.ReasoningEffort = p.str()
		case "contextTokens":
			p.once(&seen, 8)
			r.ContextTokens = int64(p.uint(maxMs))
		default:
			p.ok = false
		}
	}
	p.ok = p.ok && seen&3 == 3
	return r
}

func (p *scan) requestError(hr *hostRetryCache) policy.RequestError {
	var r policy.RequestError
	var seen uint
	for p.next() {
		switch p.key() {
		case "agent":
			p.once(&seen, 1)
			r.Agent = p.str()
		case "provider":
			p.once(&seen, 2)
			r.Provider = p.str()
		case "failure":
			p.once(&seen, 4)
			r.Failure = p.failure()
		case "phase":
			p.once(&seen, 8)
			r.Phase = policy.Phase(p.str())
			p.ok = p.ok && (r.Phase == policy.BeforeHost || r.Phase == policy.AfterHost)
		case "rand":
			p.once(&seen, 16)
			r.Rand = p.uint(maxMs - 1)
		case "hostRetry":
			p.once(&seen, 32)
			// Only the policy last decoded, by its very text, as
			// decoder.hostRetry keeps it; a new one goes the general way,
			// which decodes and keeps it.
			if hr == nil || hr.h == nil || !strings.HasPrefix(p.s[p.i:], hr.raw) {
				p.ok = false
				break
			}
			p.i += len(hr.raw)
			r.HostRetry = hr.h
		default:
			p.ok = false
		}
	}
	p.ok = p.ok && seen&31 == 31
	return r
}

func (p *scan) failure() policy.Failure {
	var f policy.Failure
	var seen uint
	p.want('{')
	for p.ok {
		switch p.key() {
		case "code":
			p.once(&seen, 1)
			f.Code = p.str()
		case "message":
			p.once(&seen, 2)
			f.Message = p.str()
		case "status":
			p.once(&seen, 4)
			f.Status = int(p.uint(math.MaxUint32))
		case "providerRetryAfterMs":
			p.once(&seen, 8)
			f.RetryAfterMs = int64(p.uint(maxMs))
		default:
			p.ok = false
		}
		if !p.next() {
			break
		}
	}
	p.ok = p.ok && seen&1 == 1
	return f
}

func (p *scan) agentOnly() string {
	if !p.next() || p.key() != "agent" {
		p.ok = false
		return ""
	}
	a := p.str()
	p.ok = p.ok && !p.next()
	return a
}
