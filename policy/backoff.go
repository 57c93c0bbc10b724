package policy

import "math/bits"

// randRange is the span of Event.Rand: a uniform draw in [0, 2^53), which a
// float64 (the JS side's Math.random) represents exactly.
const randRange = 1 << 53

// Backoff is the wait before same-channel retry number attempt (1-based):
// full jitter over an exponential ceiling, min(max, base*2^(attempt-1)), so
// that many agents failing together spread out instead of retrying in step.
// A provider's Retry-After is a floor the jitter never shortens, and it is
// honoured even above the cap: the provider knows when its window reopens.
func Backoff(attempt int, baseMs, maxMs int64, retryAfterMs int64, rand uint64) int64 {
	ceiling := maxMs
	if attempt < 1 {
		attempt = 1
	}
	if attempt <= 62 {
		if e := baseMs << (attempt - 1); e > 0 && e < maxMs && e>>(attempt-1) == baseMs {
			ceiling = e
		}
	}
	// Scale the draw onto [0, ceiling] with a 128-bit product: integer maths
	// gives the same answer natively and in wasm, where floats might not.
	hi, lo := bits.Mul64(rand%randRange, uint64(ceiling)+1)
	d := int64(hi<<11 | lo>>53)
	if d < retryAfterMs {
		d = retryAfterMs
	}
	return d
}
