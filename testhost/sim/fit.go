package sim

import (
	"fmt"
	"math/rand"
)

// The context-fit world (issue #20): sessions whose context grows with each
// request, over channels of mixed windows, some of which hold less than they
// declare (a refusal, CONTEXT_WINDOW_EXCEEDED, is the only way to find out).
// Invariant: a swap never moves a request to a channel other than its own
// (a home or pick it proposed, or the channel its last request went to)
// whose window as told to the module, less the reserve, cannot hold its
// context: every failover, backup, spill and pool move is held to it.

// fitWorld is the windows of a schedule's channels: declared (told to the
// module with model-info; 0 declares none) and real (what a request beyond
// gets refused at; 0 holds anything).
type fitWorld struct {
	on             bool
	declared, real map[Channel]int64
	told           map[Channel]int64 // what the live instance was told
	reservePercent int64
	// refusedAt is the smallest context each channel refused since the live
	// instance started: the module keeps off it for as much (policy/fit.go).
	refusedAt map[Channel]int64
	// version counts the changes to told and refusedAt (heldfast.go).
	version int
}

var fitWindows = []int64{0, 32_000, 64_000, 128_000, 200_000, 1_000_000}

// drawFitWorld draws the windows from a stream of their own, so a seed's
// other draws stay as they were; one schedule in two has the world.
func drawFitWorld(seed int64, chs []Channel) fitWorld {
	r := rand.New(rand.NewSource(seed ^ 0x5f17))
	w := fitWorld{on: r.Intn(2) == 0, declared: map[Channel]int64{}, real: map[Channel]int64{}, told: map[Channel]int64{},
		refusedAt: map[Channel]int64{}, reservePercent: 20}
	if !w.on {
		return w
	}
	for _, c := range chs {
		d := fitWindows[r.Intn(len(fitWindows))]
		w.declared[c], w.real[c] = d, d
		if d > 0 && r.Intn(5) == 0 {
			w.real[c] = d / 2 // mis-declared: it refuses at half what it says
		}
	}
	return w
}

// tellWindows sends every channel's declared window, as the shim does at
// start and after a restart (the module keeps no windows in its snapshot).
func (r *runner) tellWindows() {
	if !r.fit.on {
		return
	}
	clear(r.fit.told)
	clear(r.fit.refusedAt)
	r.fit.version++
	for _, c := range r.s.Channels {
		w := r.fit.declared[c]
		if w == 0 {
			continue
		}
		r.decide("model-info", Channel{}, nil, func(b []byte) []byte {
			b = append(b, `{"kind":"model-info","channel":`...)
			b = appendChannel(b, c)
			return fmt.Appendf(b, `,"known":true,"efforts":["high"],"contextWindow":%d}`, w)
		})
		r.fit.told[c] = w
	}
}

// grow is the agent's context for its next request: a little more each
// time; a new session now and then starts small, and the host compacts a
// context past a million.
func (r *runner) grow(a *simAgent) {
	if !r.fit.on {
		return
	}
	d := draw(a.key, a.req*13+5)
	a.ctx += int64(500 + d%40_000)
	if a.ctx > 1_100_000 || d%97 == 0 {
		a.ctx = int64(2_000 + d%20_000)
	}
}

// contextField is the request event's contextTokens.
func (r *runner) contextField(b []byte, a *simAgent) []byte {
	if !r.fit.on || a.ctx == 0 {
		return b
	}
	return fmt.Appendf(b, `,"contextTokens":%d`, a.ctx)
}

// refused reports whether target's real window refuses the agent's context,
// and the failure it answers with.
func (r *runner) refused(target Channel, a *simAgent) (failure, bool) {
	w := r.fit.real[target]
	if !r.fit.on || w == 0 || a.ctx <= w {
		return failure{}, false
	}
	if at, ok := r.fit.refusedAt[target]; !ok || a.ctx < at {
		r.fit.refusedAt[target] = a.ctx
		r.fit.version++
	}
	return failure{Code: "CONTEXT_WINDOW_EXCEEDED", Status: 400, Message: "maximum context length exceeded", latencyMs: 300}, true
}

// checkFit is the world's invariant, after a request's verdict.
func (r *runner) checkFit(a *simAgent, prop, target Channel, swapped bool) {
	if !r.fit.on || !swapped || a.ctx == 0 || a.proposed[target] || target == prop {
		return
	}
	if target == a.prevRoute {
		// The session's current channel: a home the module chose for it (a
		// low reading at its start), its pool route, or where it stays.
		return
	}
	// The session's own channel though its last request went elsewhere: its
	// home or pick as the module holds them (horizon.go agentOwn), or a pool
	// route it was on, one of which is its pool route (which the checker
	// cannot name: a quota wait sets it silently). The documented rule spares
	// the session's own channel its declared window, not a context as long
	// as one it refused. Issue #17, seed 14 (120 agents, 24 h, 14h15m): a
	// session whose pool route (200k) was behind its provider's open time
	// went to the pool's 1M route, and back to its route, 204k deep, once the
	// provider closed; the module was right.
	if (target == a.modHome || target == a.modPick || a.pooledOn[target]) && r.fitsOwn(a, target) {
		return
	}
	w := r.fit.told[target]
	if w == 0 {
		return
	}
	if usable := w - w*r.fit.reservePercent/100; a.ctx > usable {
		r.brk("route-too-small", "agent %q (context %d) swapped to %s, whose window %d holds %d", a.id, a.ctx, target, w, usable)
	}
}

// fitsOwn reports whether the agent's own channel ch may take its request:
// the module keeps a request off even its own channel once ch refused as
// long a context. The other route checks ask it of the channels they call usable.
func (r *runner) fitsOwn(a *simAgent, ch Channel) bool {
	at, ok := r.fit.refusedAt[ch]
	return !r.fit.on || !ok || a.ctx == 0 || a.ctx < at
}

// fitsOther reports whether ch, not the agent's own, may take its request:
// its told window less the reserve holds the context (fitsOwn too).
//
// A window the module was not told holds anything, except for a request
// that a window refused: until it succeeds (or the turn ends) the module
// moves it only to a target whose told window is known to hold it (policy
// fit.go fitNeed.known; docs/decisions.md "Context fit", a refusal: "the
// next target whose declared window holds it"). Issue #17, seed 49 (120
// agents, 24 h, 9h34m): sub/agent-1's 129k request, refused by a 128k
// route, then turned away with HTTP 402 by that route's provider, waited
// for it while local|meta-llama/llama-4-maverick (no declared window) was
// closed; the checker called that channel usable (held-while-usable) and
// an alternative to the open route (route-to-open). The module was right.
func (r *runner) fitsOther(a *simAgent, ch Channel) bool {
	if !r.fitsOwn(a, ch) {
		return false
	}
	w := r.fit.told[ch]
	if r.fit.on && w == 0 && a.refusedReq {
		return false
	}
	return !r.fit.on || w == 0 || a.ctx == 0 || a.ctx <= w-w*r.fit.reservePercent/100
}

// fits is fitsOwn for the agent's own proposal, fitsOther for the rest.
func (r *runner) fits(a *simAgent, ch Channel, own bool) bool {
	if own {
		return r.fitsOwn(a, ch)
	}
	return r.fitsOther(a, ch)
}
