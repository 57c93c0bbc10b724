package sim

import "sort"

// The model-unavailable outages in force, kept as the run's time moves on.
// unavailable is asked per channel of every held agent whenever the picture
// changes; scanning the whole schedule each time was half the bench-day's
// CPU (two 12-hour seeds, 600 agents, 100 outages an hour: over 2000 ops per
// scan). A run's time never goes back (every item is queued at or after
// the current one), so an outage whose window (its start to an hour after
// its end) has passed can be dropped for good, and one that has not started
// is not looked at yet. The answer is the same as unavailableRef's, which
// checks each op's window afresh; VerifyFast makes every call compare them.

// unavailIndex is the runner's view of those outages.
type unavailIndex struct {
	built bool
	ops   []int // the ModeUnavailable outages, by start
	next  int   // ops[next:] have not started
	live  []int // started, window not yet over
	at    int64 // the time live was brought up to
	due   int64 // the next time live changes: an outage starts or a window ends
	// version counts the changes of what live covers (checkHeld's gate).
	version int
	// What live covers: channels, and providers (an outage of every model).
	chans map[Channel]bool
	provs map[string]bool
}

// unavailHourMs: the host may say a model is unavailable up to an hour
// after its outage ended (what it learned stays in its model list).
const unavailHourMs = 3600_000

// VerifyFast makes the simulator's incremental checks also compute their
// straightforward reference on every call and break ("fast-check") where
// the two differ. Tests set it; it costs the time the fast checks save.
var VerifyFast = false

// unavailable reports a model-unavailable outage on ch in force or within the hour.
func (r *runner) unavailable(ch Channel) bool {
	r.syncUnavail()
	got := r.unavail.chans[ch] || r.unavail.provs[ch.Provider]
	if VerifyFast {
		want := r.unavailableRef(ch)
		if want {
			verified.unavailable.Add(1)
		}
		if got != want {
			r.brk("fast-check", "unavailable(%s) at %s: index says %v, a scan of the schedule %v", ch, fmtVirtual(r.now-Epoch), got, want)
		}
	}
	return got
}

// syncUnavail brings the index up to r.now.
func (r *runner) syncUnavail() {
	x := &r.unavail
	if !x.built || r.now < x.at {
		r.buildUnavail()
	}
	if r.now >= x.due {
		r.advanceUnavail()
	}
	x.at = r.now
}

// buildUnavail lists the schedule's model-unavailable outages by start.
// (Time going back, which a run never does, rebuilds it rather than err.)
func (r *runner) buildUnavail() {
	x := &r.unavail
	*x = unavailIndex{built: true, at: -1 << 62, due: -1 << 62, version: x.version + 1, chans: map[Channel]bool{}, provs: map[string]bool{}}
	for i := range r.s.Ops {
		if op := &r.s.Ops[i]; op.Kind == OpOutage && op.Mode == ModeUnavailable {
			x.ops = append(x.ops, i)
		}
	}
	sort.SliceStable(x.ops, func(i, j int) bool { return r.s.Ops[x.ops[i]].At < r.s.Ops[x.ops[j]].At })
}

// advanceUnavail brings live up to r.now: outages that started join it,
// those whose window ended leave it, and the cover is redrawn if it changed.
func (r *runner) advanceUnavail() {
	x := &r.unavail
	changed := false
	for x.next < len(x.ops) && Epoch+r.s.Ops[x.ops[x.next]].At <= r.now {
		x.live = append(x.live, x.ops[x.next])
		x.next++
		changed = true
	}
	x.due = 1<<63 - 1
	if x.next < len(x.ops) {
		x.due = Epoch + r.s.Ops[x.ops[x.next]].At
	}
	live := x.live[:0]
	for _, i := range x.live {
		if end := Epoch + r.s.Ops[i].At + r.s.Ops[i].Dur + unavailHourMs; end >= r.now {
			live = append(live, i)
			x.due = min(x.due, end+1)
		} else {
			changed = true
		}
	}
	x.live = live
	if !changed {
		return
	}
	x.version++
	clear(x.chans)
	clear(x.provs)
	for _, i := range x.live {
		if op := &r.s.Ops[i]; op.Ch >= 0 {
			x.chans[r.s.Channels[op.Ch]] = true
		} else {
			x.provs[op.Prov] = true
		}
	}
}

// unavailableRef is unavailable as a scan of every op: the reference.
func (r *runner) unavailableRef(ch Channel) bool {
	for i := range r.s.Ops {
		op := &r.s.Ops[i]
		if op.Kind != OpOutage || op.Mode != ModeUnavailable || Epoch+op.At > r.now || Epoch+op.At+op.Dur+unavailHourMs < r.now {
			continue
		}
		if op.Ch >= 0 && r.s.Channels[op.Ch] == ch || op.Ch < 0 && op.Prov == ch.Provider {
			return true
		}
	}
	return false
}
