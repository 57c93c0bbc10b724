package sim

import (
	"math"
	"sync/atomic"
)

// checkHeld's incremental part (horizon.go holds the check itself). Whether
// a held agent has a channel it may use is
//
//	some ch in agentPrefs(a): !unavailable(ch) && fits(a, ch, ch is its own) && closed(ch)
//
// and it is asked after every step. Walking every held agent's preferences
// each time the breakers moved was over a third of the bench-day's CPU (two
// 12-hour seeds, 600 agents, 100 outages an hour: hundreds of held agents,
// a breaker moving every few steps). So the two halves are kept apart:
//   - ok: the channels that are available and closed, one bit each. It
//     changes only when a breaker moves (r.picture), the model-unavailable
//     outages in force change (unavail.go), or a provider's open time ends
//     (providerDue); it is redrawn then, a few map lookups per channel.
//   - each agent's mask: its preferences that fit its request. It changes
//     only with what agentPrefs and fits read (heldKey), and is redrawn
//     when that differs from what it was drawn for.
//
// An agent is usable when ok & mask != 0; the agents are walked only when
// ok, the fit world or the list of held agents changed, or a slack timer is
// due. VerifyFast also runs the reference (usableRef: the scan as it was)
// for every held agent after every step, and breaks on any difference.

// heldFast is the runner's memo of the ok half.
type heldFast struct {
	idx         map[Channel]int // each channel's bit
	chans       []Channel       // by bit
	ok          uint64
	valid       bool
	picture     int   // r.picture ok was drawn for
	unavailVer  int   // r.unavail.version ok was drawn for
	providerDue int64 // when a provider's open time, holding a channel back, ends
	walkedOk    uint64
	walkedFit   int
}

// heldKey is what an agent's mask was drawn from: what agentPrefs reads of
// the agent and the world, the agent's context and the fit world (fits).
type heldKey struct {
	modHome, modPick, routed Channel
	touchedPool              bool
	ctx                      int64
	refusedReq               bool
	backup                   Channel
	hasBackup                bool
	fitVersion               int
}

// heldMemo is an agent's mask and what it was drawn from.
type heldMemo struct {
	key   heldKey
	mask  uint64
	valid bool
}

// maxHeldBits: a world with more channels than bits goes the reference way.
const maxHeldBits = 64

// heldGate redraws ok if what it reads changed and says whether the held
// agents must be walked.
func (r *runner) heldGate() bool {
	h := &r.held
	r.syncUnavail()
	if !h.valid || r.picture != h.picture || r.unavail.version != h.unavailVer || r.now >= h.providerDue {
		h.valid, h.picture, h.unavailVer, h.providerDue, h.ok = true, r.picture, r.unavail.version, math.MaxInt64, 0
		for i, ch := range h.chans {
			h.ok |= r.channelOk(ch) << i
		}
	}
	return r.heldDirty || h.ok != h.walkedOk || r.fit.version != h.walkedFit || r.now >= r.heldRecheckAt
}

// walked records what the walk just done saw.
func (r *runner) walked() {
	r.held.walkedOk, r.held.walkedFit = r.held.ok, r.fit.version
}

// channelOk is 1 when ch is available and closed; it notes when a
// provider's open time holding ch back ends (ch may close then).
func (r *runner) channelOk(ch Channel) uint64 {
	if !r.unavailable(ch) && r.closed(ch) {
		return 1
	}
	if p := r.track[providerOf(ch)]; p != nil && p.state == "open" && r.now < p.openUntil {
		r.held.providerDue = min(r.held.providerDue, p.openUntil)
	}
	return 0
}

// heldBit is ch's bit, giving it one (and its ok bit) at first sight;
// false when the bits ran out.
func (r *runner) heldBit(ch Channel) (uint64, bool) {
	h := &r.held
	i, ok := h.idx[ch]
	if !ok {
		if len(h.chans) == maxHeldBits {
			return 0, false
		}
		if h.idx == nil {
			h.idx = map[Channel]int{}
		}
		i = len(h.chans)
		h.idx[ch], h.chans = i, append(h.chans, ch)
		if h.valid {
			h.ok |= r.channelOk(ch) << i
		}
	}
	return 1 << i, true
}

// usableFast is usableRef from the two halves.
func (r *runner) usableFast(a *simAgent) bool {
	k := heldKey{modHome: a.modHome, modPick: a.modPick, routed: a.routed, touchedPool: a.touchedPool, ctx: a.ctx, refusedReq: a.refusedReq, fitVersion: r.fit.version}
	if r.backup != nil {
		k.backup, k.hasBackup = *r.backup, true
	}
	m := &a.heldMemo
	if !m.valid || m.key != k {
		m.valid, m.key, m.mask = true, k, 0
		prefs, own := r.agentPrefsOwn(a)
		for i, ch := range prefs {
			bit, ok := r.heldBit(ch)
			if !ok {
				m.valid = false
				return r.usableRef(a, r.unavailable)
			}
			// Only the agent's own channel is spared the told window (horizon.go agentOwn).
			if r.fits(a, ch, i == 0 && ch == own) {
				m.mask |= bit
			}
		}
	}
	return r.held.ok&m.mask != 0
}

// usableRef is the held agent's test as a scan of its preferences: the
// reference (with unavailable as given: the index's, or the scan's).
func (r *runner) usableRef(a *simAgent, unavailable func(Channel) bool) bool {
	prefs, own := r.agentPrefsOwn(a)
	for i, ch := range prefs {
		// (one the host cannot serve, or too small for the request (fit.go), is no use)
		if !unavailable(ch) && r.fits(a, ch, i == 0 && ch == own) && r.closed(ch) {
			return true
		}
	}
	return false
}

// verifyHeld (VerifyFast) holds every held agent's state after checkHeld
// against the reference, done from scratch now.
func (r *runner) verifyHeld() {
	if !VerifyFast || len(r.res.Breaks) > 0 {
		return
	}
	for _, a := range r.agents {
		if !a.waiting || !a.held {
			continue
		}
		want, got := r.usableRef(a, r.unavailableRef), a.usableSince != 0
		if want {
			verified.heldUsable.Add(1)
		} else {
			verified.heldNot.Add(1)
		}
		if want != got {
			r.brk("fast-check", "held agent %q: usable %v by the incremental check, %v by a scan of its preferences", a.id, got, want)
			return
		}
	}
}

// verified counts what VerifyFast compared, by answer (a test makes sure
// the comparisons are not vacuous).
var verified struct{ heldUsable, heldNot, unavailable atomic.Int64 }
