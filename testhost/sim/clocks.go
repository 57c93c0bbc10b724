package sim

// Clock worlds (issue #22): several hosts of one DSH_HOME, each its own
// instance of the wasm module, share channel health through one store, as
// host-shim/health.js shares health.json: a host that sees a breaker change
// merges the store into its module (restore) and writes its snapshot back; every
// healthRefreshMs it merges the store again; a restarted host configures a
// fresh module and restores the store. Each host has a clock of its own: an
// offset from true time (up to 10 min either way), a drift (up to 100 ppm),
// and steps of its wall clock (up to 10 min either way, as an NTP correction
// or a resumed VM makes). The module's time is the shim's (host-shim/clock.js):
// the wall time when the process started plus its monotonic time since, so a
// step reaches a host's module only at its next restart. ClockWallShim hands
// the module the wall clock instead, steps and all, as the shim did before.
//
// The primary dies for stretches; every host's agents keep asking for it.
// Some stretches kill it on one host only (its own network path, its own
// key): the others' answers, so once the shared open time is up they use it
// and close the shared breaker, and the host whose primary is dead must trip
// once per open time, not once per close. A running host's merges (a
// refresh, a save's read) are news, received at its now (restore `live`); a
// restart's restore is not. ClockBootMerge merges everything as a restart
// does, as the shim did before `live`: a writer behind's opens arrive due.
// Invariants, checked on every host after every step:
//   - clock-no-thrash: a host opens the primary at most 60000/cooldownMs+2
//     times in any minute (true time): the cooldown arithmetic, which bounds
//     its requests to a dead primary per open time;
//   - clock-trip-reaches-all: a real trip on one host (a failure it saw, not
//     a record it adopted) is in every other host's state within one refresh
//     (it holds the primary open, or has opened it itself since), unless that
//     host restarted meanwhile and its primary answers: a restart reads the
//     store as dated, and a writer behind's open may be over by then;
//   - clock-open-bounded: no host holds a channel open further ahead of its
//     own time than the longest open any writer observes (maxCooldownMs)
//     plus the allowed skew (maxClockSkewMs).

import (
	"fmt"
	"math/rand"
	"strings"
	"sync/atomic"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/tidwall/gjson"
)

// ClockWallShim hands each module its host's wall clock (steps included), as
// the shim did before host-shim/clock.js: set it to measure the old shim.
var ClockWallShim = false

// ClockBootMerge merges as a restart's restore does everywhere (no `live`):
// set it to measure the merge of before.
var ClockBootMerge = false

// clockReachChecks counts the trips clock-trip-reaches-all looked for on the
// other hosts (a test makes sure the invariant is not vacuous).
var clockReachChecks atomic.Int64

const (
	cwRefreshMs  = 5_000 // healthRefreshMs's default
	cwTickMs     = 100
	cwCooldownMs = 30_000
	cwMaxCoolMs  = 4 * 60_000
	cwSkewMs     = 3 * 60_000 // maxClockSkewMs's default
	cwHosts      = 3
)

var (
	cwPrimary   = Channel{"deepseek-official", "deepseek-v4-flash"}
	cwSecondary = Channel{"代理商-α", "模型-β"}
	cwConfig    = fmt.Sprintf(`{"chain":[{"provider":%q,"model":%q},{"provider":%q,"model":%q}],"failureThreshold":1,"providerThreshold":0,"probes":false,"cooldownMs":%d,"maxCooldownMs":%d,"maxFailovers":1000,"maxClockSkewMs":%d}`,
		cwPrimary.Provider, cwPrimary.Model, cwSecondary.Provider, cwSecondary.Model, cwCooldownMs, cwMaxCoolMs, cwSkewMs)
)

type cwHost struct {
	id        int
	m         *Module
	offset    float64         // wall ms ahead of true time at t=0
	drift     float64         // ms per ms, of both its clocks
	steps     map[int64]int64 // true tick -> wall step (ms)
	stepped   int64           // steps taken so far
	restarts  map[int64]bool  // true ticks at which the host restarts
	startWall int64           // module time base: the wall when the process started ...
	startMono float64         // ... and the monotonic time then
	opens     []int64         // true times it opened the primary
	deadReqs  int
}

func (h *cwHost) mono(t int64) float64 { return float64(t) * (1 + h.drift) }
func (h *cwHost) wall(t int64) int64 {
	return Epoch + int64(h.offset+h.mono(t)) + h.stepped
}

// now is the module's time on host h at true time t.
func (h *cwHost) now(t int64) int64 {
	if ClockWallShim {
		return h.wall(t)
	}
	return h.startWall + int64(h.mono(t)-h.startMono)
}

type cwWorld struct {
	rt      *testhost.Runtime
	res     *Result
	hosts   []*cwHost
	store   []byte // the shared health file: a snapshot
	dead    []cwDeath
	pending map[int]int64 // host -> true time of a real trip the others must see
	t       int64
}

func (w *cwWorld) brk(inv, format string, args ...any) {
	if _, known := KnownFailing[inv]; known && !Strict {
		w.res.Known[inv]++
		return
	}
	w.res.Breaks = append(w.res.Breaks, Break{Invariant: inv, AtMs: w.t, OpID: -1, Detail: fmt.Sprintf(format, args...)})
}

// cwDeath is a stretch [from, to) of true time in which the primary is dead
// on one host (on, its id) or on every host (on -1).
type cwDeath struct {
	from, to int64
	on       int
}

func (d cwDeath) kills(h int) bool { return d.on < 0 || d.on == h }

// deadAt says whether host h's primary is dead at t.
func (w *cwWorld) deadAt(h int, t int64) bool {
	for _, d := range w.dead {
		if d.kills(h) && t >= d.from && t < d.to {
			return true
		}
	}
	return false
}

// deadThrough says whether host h's primary stays dead over [from, to].
func (w *cwWorld) deadThrough(h int, from, to int64) bool {
	for _, d := range w.dead {
		if d.kills(h) && from >= d.from && to < d.to {
			return true
		}
	}
	return false
}

// RunClocks plays one clock world drawn from seed for o.Hours.
func RunClocks(rt *testhost.Runtime, seed int64, o Options) Result {
	start := time.Now()
	res := Result{Seed: seed, Known: map[string]int{}}
	r := rand.New(rand.NewSource(seed*7919 + 17))
	end := int64(o.Hours * 3600_000)
	w := &cwWorld{rt: rt, res: &res, pending: map[int]int64{}, store: []byte(`{"channels":[]}`)}
	// The primary dies for 2-20 minutes, about twice an hour; half the
	// time on one host only.
	for t := int64(r.Intn(600_000)); t < end; t += int64(10*60_000 + r.Intn(50*60_000)) {
		d := int64(2*60_000 + r.Intn(18*60_000))
		on := -1
		if r.Intn(2) == 0 {
			on = r.Intn(cwHosts)
		}
		w.dead = append(w.dead, cwDeath{t, t + d, on})
		t += d
	}
	for i := range cwHosts {
		h := &cwHost{id: i, offset: float64(r.Intn(1_200_001) - 600_000), drift: float64(r.Intn(201)-100) / 1e6,
			steps: map[int64]int64{}, restarts: map[int64]bool{}}
		if i == 0 {
			h.offset, h.drift = 0, 0 // one host on true time
		}
		for t := int64(r.Intn(3600_000)); t < end; t += int64(600_000 + r.Intn(3*3600_000)) {
			h.steps[t/cwTickMs*cwTickMs] = int64(r.Intn(1_200_001) - 600_000)
		}
		for t := int64(r.Intn(1800_000)); t < end; t += int64(300_000 + r.Intn(3600_000)) {
			h.restarts[t/cwTickMs*cwTickMs] = true
		}
		w.hosts = append(w.hosts, h)
		if !w.start(h, 0) {
			return w.finish(start)
		}
	}
	defer func() {
		for _, h := range w.hosts {
			h.m.close()
		}
	}()
	for w.t = 0; w.t < end && len(res.Breaks) == 0; w.t += cwTickMs {
		w.tick(r)
	}
	w.t = min(w.t, end)
	for _, h := range w.hosts {
		for k, at := range h.opens {
			if n := countBefore(h.opens[k:], at+60_000); n > 60_000/cwCooldownMs+2 {
				w.t = at
				w.brk("clock-no-thrash", "host %d opened the primary %d times in the minute from %s (offset %.0f s, drift %.0f ppm)",
					h.id, n, fmtVirtual(at), h.offset/1000, h.drift*1e6)
				break
			}
		}
	}
	res.VirtualMs = end
	return w.finish(start)
}

func (w *cwWorld) finish(start time.Time) Result {
	w.res.Wall = time.Since(start)
	return *w.res
}

func countBefore(ts []int64, end int64) int {
	n := 0
	for _, t := range ts {
		if t < end {
			n++
		}
	}
	return n
}

// start (re)starts host h's process at true time t: a fresh module restores the store.
func (w *cwWorld) start(h *cwHost, t int64) bool {
	if h.m != nil {
		h.m.close()
	}
	h.startWall, h.startMono = h.wall(t), h.mono(t)
	m, err := newModule(w.rt, cwConfig)
	if err != nil {
		w.brk("export-error", "configure: %v", err)
		return false
	}
	h.m = m
	return w.merge(h, t, false)
}

// merge takes the store into host h's module: a restart's restore, or
// (live) news to a running host: a refresh, or the read half of a save.
func (w *cwWorld) merge(h *cwHost, t int64, live bool) bool {
	w.res.Events++
	in := h.m.restoreInput(w.store, h.now(t))
	if live && !ClockBootMerge {
		in = h.m.liveInput(in)
	}
	if _, err := h.m.call("restore", in); err != nil {
		w.brk("export-error", "restore: %v (store %s)", err, clip(string(w.store)))
		return false
	}
	return w.checkBound(h, t)
}

// save is the shim's health save: merge the store, then write what the
// module keeps of its records at the host's time (persist: a closed record
// past the prune horizon and the skew, on that host's clock, is not
// written). The worlds keep the default horizon, a day: their clocks differ
// by up to ~37 min, beyond the 3 min skew they allow, and with a one-hour
// horizon two hosts disagreed about which records were forgotten (3 of 40
// worlds broke clock-trip-reaches-all; with the skew set to 40 min, none).
func (w *cwWorld) save(h *cwHost, t int64) {
	if !w.merge(h, t, true) {
		return
	}
	file, err := h.m.fileAt(h.now(t))
	if err != nil {
		w.brk("export-error", "persist: %v", err)
		return
	}
	w.store = file
}

// primaryState is host h's breaker of the primary as its snapshot says.
func (w *cwWorld) primaryState(h *cwHost) (string, bool) {
	snap, err := h.m.call("snapshot", []byte("{}"))
	if err != nil {
		w.brk("export-error", "snapshot: %v", err)
		return "", false
	}
	state := "closed"
	gjson.GetBytes(snap, "channels").ForEach(func(_, c gjson.Result) bool {
		if channelOf(c.Get("channel")) == cwPrimary {
			state = c.Get("state").String()
			return false
		}
		return true
	})
	return state, true
}

// checkBound: no breaker of h open further ahead of h's time than the
// longest open a writer observes plus the allowed skew.
func (w *cwWorld) checkBound(h *cwHost, t int64) bool {
	snap, err := h.m.call("snapshot", []byte("{}"))
	if err != nil {
		w.brk("export-error", "snapshot: %v", err)
		return false
	}
	now := h.now(t)
	ok := true
	gjson.GetBytes(snap, "channels").ForEach(func(_, c gjson.Result) bool {
		if c.Get("state").String() != "closed" && c.Get("openUntilMs").Int()-now > cwMaxCoolMs+cwSkewMs {
			w.brk("clock-open-bounded", "host %d holds %s open %d s more, beyond the longest open (%d s) plus the skew (%d s)",
				h.id, channelOf(c.Get("channel")), (c.Get("openUntilMs").Int()-now)/1000, cwMaxCoolMs/1000, cwSkewMs/1000)
			ok = false
			return false
		}
		return true
	})
	return ok
}

func (w *cwWorld) tick(r *rand.Rand) {
	t := w.t
	for _, h := range w.hosts {
		if d, ok := h.steps[t]; ok {
			h.stepped += d
		}
		if h.restarts[t] {
			if !w.start(h, t) {
				return
			}
		}
		if t%cwRefreshMs == int64(h.id)*cwTickMs && !w.merge(h, t, true) {
			return
		}
		if r.Intn(10) == 0 { // about a request a second per host
			w.request(h, t, fmt.Sprintf("h%d-%d", h.id, r.Intn(4)))
		}
		if len(w.res.Breaks) > 0 {
			return
		}
	}
	for i, at := range w.pending {
		if t < at+cwRefreshMs+cwTickMs*cwHosts {
			continue
		}
		delete(w.pending, i)
		if !w.deadThrough(i, at, t) {
			continue // the primary came back meanwhile: a host may rightly have closed it
		}
		for _, g := range w.hosts {
			if g.id == i || len(restartsIn(g, at, t)) > 0 && !w.deadThrough(g.id, at, t) {
				// A restart restores the store as dated (not news): a
				// writer behind's open may be over by then, and a host
				// whose primary answers rightly closes it (RATIONALE.md,
				// "Clocks"); the writer trips once more, no thrash.
				continue
			}
			clockReachChecks.Add(1)
			st, ok := w.primaryState(g)
			if ok && st == "closed" && (len(g.opens) == 0 || g.opens[len(g.opens)-1] < at) {
				w.brk("clock-trip-reaches-all", "host %d's trip at %s is not in host %d's state (offsets %s)", i, fmtVirtual(at), g.id, w.offsets())
			}
		}
	}
}

// restartsIn lists host h's restarts in [from, to] of true time.
func restartsIn(h *cwHost, from, to int64) []int64 {
	var out []int64
	for t := range h.restarts {
		if t >= from && t <= to {
			out = append(out, t)
		}
	}
	return out
}

func (w *cwWorld) offsets() string {
	var b strings.Builder
	for _, h := range w.hosts {
		fmt.Fprintf(&b, "[%d: %+.0f s, %+.0f s stepped, %.0f ppm]", h.id, h.offset/1000, float64(h.stepped)/1000, h.drift*1e6)
	}
	return b.String()
}

// request: one of host h's agents asks for the primary; a dead primary
// fails before the host retries, anything else answers.
func (w *cwWorld) request(h *cwHost, t int64, agent string) {
	w.res.Events++
	out, in, err := h.m.decide(h.now(t), bareRequest(agent, cwPrimary))
	if err != nil {
		w.brk("export-error", "request: %v (input %s)", err, clip(string(in)))
		return
	}
	target := cwPrimary
	if out.Kind == "swap" {
		target = out.Swap
	}
	changed := w.circuits(h, t, out)
	w.res.Events++
	if target == cwPrimary && w.deadAt(h.id, t) {
		h.deadReqs++
		w.res.Failures++
		out, in, err = h.m.decide(h.now(t), func(b []byte) []byte {
			b = append(b, `{"kind":"request-error","agent":`...)
			b = appendStr(b, agent)
			b = append(b, `,"provider":`...)
			b = appendStr(b, target.Provider)
			b = append(b, `,"failure":{"code":"SERVER","status":500,"message":"Internal Server Error"},"phase":"before-host","hostRetry":`...)
			b = append(b, hostRetryJSON...)
			return append(b, `,"rand":0}`...)
		})
	} else {
		out, in, err = h.m.decide(h.now(t), func(b []byte) []byte {
			b = append(b, `{"kind":"settled","agent":`...)
			return append(appendStr(b, agent), '}')
		})
	}
	if err != nil {
		w.brk("export-error", "answer: %v (input %s)", err, clip(string(in)))
		return
	}
	if w.circuits(h, t, out) || changed {
		w.save(h, t)
	}
}

// circuits notes h's opens of the primary (real trips: this host saw the
// failure) and reports whether any breaker moved.
func (w *cwWorld) circuits(h *cwHost, t int64, out Output) bool {
	changed := false
	for _, e := range out.Effects {
		if e.Kind != "circuit" {
			continue
		}
		changed = true
		if e.Channel == cwPrimary && e.To == "open" {
			h.opens = append(h.opens, t)
			if _, ok := w.pending[h.id]; !ok {
				w.pending[h.id] = t
			}
		}
	}
	return changed
}
