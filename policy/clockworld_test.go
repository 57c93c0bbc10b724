package policy

import (
	"fmt"
	"math/rand"
	"testing"
)

// A world of hosts sharing health through one store, as host processes of one
// DSH_HOME share health.json (host-shim/health.js: a save merges the file
// into the module and writes its snapshot; a refresh merges the file), each
// on a clock of its own: an offset, a drift, and steps. The primary is dead
// for a stretch; every host's agents keep asking for it. Invariants:
//   - no trip thrash: opens of one channel per host per minute stay within
//     the cooldown arithmetic;
//   - a real trip on any host reaches every other host within one refresh;
//   - no host holds a channel open longer than the longest open any writer
//     observed (maxCooldownMs) plus the allowed skew.
// In some worlds the primary dies on one host only (its own network path, its
// own key): the others' is healthy, they use it once the shared open time is
// up and close the shared breaker, and the host whose primary is dead must
// still trip once per open time, not once per close (the no-thrash bound).
// It uses only Step, Health and Merge, so it runs unchanged against the
// newest-wins merge of before (RATIONALE.md, "Clocks": its numbers there).

const (
	cwRefreshMs  = 5_000
	cwTickMs     = 100
	cwCooldownMs = 30_000
	cwMaxCoolMs  = 4 * 60_000
	cwSkewMs     = 3 * 60_000 // DefaultMaxClockSkewMs
	cwDeadFrom   = 60_000
	cwDeadTo     = 600_000
	cwEndMs      = 900_000
)

type cwHost struct {
	*sim
	offset   float64 // ms ahead of true time
	drift    float64 // ms per ms
	steps    map[int64]float64
	mono     bool // the shim's monotonic clock: a step does not reach the module
	healthy  bool // its primary never dies (a world where it dies on one host only)
	opens    []int64
	deadReqs int
}

// clock is the host's time at true time t, on an epoch like the wall clock's.
func (h *cwHost) clock(t int64) int64 {
	return 1_800_000_000_000 + int64(float64(t)+h.offset+h.drift*float64(t))
}

type cwBreak struct {
	inv string
	at  int64
	msg string
}

type cwWorld struct {
	t       *testing.T
	hosts   []*cwHost
	store   []ChannelHealth
	breaks  []cwBreak
	pending map[int]int64 // host -> true time of a trip the others must see by +refresh
}

// brk records an invariant's first break in the world: the rest repeat it.
func (w *cwWorld) brk(inv string, at int64, format string, a ...any) {
	for _, b := range w.breaks {
		if b.inv == inv {
			return
		}
	}
	{
		w.breaks = append(w.breaks, cwBreak{inv, at, fmt.Sprintf(format, a...)})
	}
}

func (w *cwWorld) save(h *cwHost) {
	w.merge(h)
	w.store = h.s.Health()
}

// bootMerge makes the world's running hosts take the store as a restore at
// start does (Merge), not as news (MergeLive): flip it to measure the merge
// of before (a writer behind's opens arrive due).
var bootMerge = false

// merge takes the store into a running host: a refresh, or a save's read.
func (w *cwWorld) merge(h *cwHost) {
	if bootMerge {
		h.s.Merge(h.now, w.store)
		return
	}
	h.s.MergeLive(h.now, w.store)
}

// deadOn: the one host whose primary dies, or -1 for all.
func newClockWorld(t *testing.T, clocks []struct{ offset, drift float64 }, steps map[int]map[int64]float64, mono bool, deadOn int) *cwWorld {
	w := &cwWorld{t: t, pending: map[int]int64{}}
	for i, c := range clocks {
		m := newSim(t, func(cfg *Config) {
			cfg.CooldownMs, cfg.MaxCooldownMs, cfg.FailureThreshold, cfg.ProviderThreshold, cfg.Probes = cwCooldownMs, cwMaxCoolMs, 1, 0, false
		})
		w.hosts = append(w.hosts, &cwHost{sim: m, offset: c.offset, drift: c.drift, steps: steps[i], mono: mono, healthy: deadOn >= 0 && deadOn != i})
	}
	return w
}

func (w *cwWorld) run(rng *rand.Rand) {
	for tt := int64(0); tt < cwEndMs; tt += cwTickMs {
		for i, h := range w.hosts {
			if d, ok := h.steps[tt]; ok && !h.mono {
				h.offset += d
			}
			h.now = h.clock(tt)
			if tt%cwRefreshMs == int64(i)*cwTickMs {
				w.merge(h)
			}
			if rng.Intn(3) == 0 {
				w.request(i, h, tt)
			}
			w.checkBound(i, h, tt)
		}
		for i, at := range w.pending {
			if tt < at+cwRefreshMs+cwTickMs*int64(len(w.hosts)) {
				continue
			}
			delete(w.pending, i)
			for j, g := range w.hosts {
				if j != i && g.state(chA) == Closed && lastOpen(g) < at {
					w.brk("trip-reaches-all", tt, "host %d's trip at %s never reached host %d", i, fmtT(at), j)
				}
			}
		}
	}
	for i, h := range w.hosts {
		for k, at := range h.opens {
			if n := countWithin(h.opens[k:], at+60_000); n > 60_000/cwCooldownMs+2 {
				w.brk("no-thrash", at, "host %d opened the primary %d times in the minute from %s", i, n, fmtT(at))
				break
			}
		}
	}
}

func lastOpen(h *cwHost) int64 {
	if len(h.opens) == 0 {
		return -1
	}
	return h.opens[len(h.opens)-1]
}

func countWithin(opens []int64, end int64) int {
	n := 0
	for _, at := range opens {
		if at < end {
			n++
		}
	}
	return n
}

func fmtT(ms int64) string { return fmt.Sprintf("%d.%01ds", ms/1000, ms%1000/100) }

// request: one agent of host i asks for the primary; a dead primary fails
// before the host retries, anything else answers.
func (w *cwWorld) request(i int, h *cwHost, tt int64) {
	agent := fmt.Sprintf("h%d", i)
	v := h.request(agent, chA)
	target := chA
	if v.Kind == Swap {
		target = v.Channel
	}
	dead := target == chA && !h.healthy && tt >= cwDeadFrom && tt < cwDeadTo
	var out Output
	if dead {
		h.deadReqs++
		out = h.step(RequestError{Agent: agent, Provider: target.Provider, Failure: Failure{Code: "SERVER", Status: 500}, Phase: BeforeHost})
	} else {
		out = h.step(Settled{Agent: agent})
	}
	changed := false
	for _, e := range out.Effects {
		if c, ok := e.(CircuitChanged); ok {
			changed = true
			if c.Channel == chA && c.To == Open {
				h.opens = append(h.opens, tt)
				if _, ok := w.pending[i]; !ok {
					w.pending[i] = tt
				}
			}
		}
	}
	if changed {
		w.save(h)
	}
}

func (w *cwWorld) checkBound(i int, h *cwHost, tt int64) {
	for _, r := range h.s.Health() {
		if r.State != Closed && r.OpenUntilMs-h.now > cwMaxCoolMs+cwSkewMs {
			w.brk("open-bounded", tt, "host %d holds %s open %d s more, beyond the longest open (%d s) plus the skew",
				i, r.Channel, (r.OpenUntilMs-h.now)/1000, cwMaxCoolMs/1000)
			return
		}
	}
}

// wallClockShim hands the module the wall clock, steps included, as the shim
// did before host-shim/clock.js (flip it to measure the old shim).
var wallClockShim = false

type cwCase struct {
	name   string
	clocks []struct{ offset, drift float64 }
	steps  map[int]map[int64]float64
	deadOn int // the one host whose primary dies; -1: every host's
}

func clockCases(seeds int) []cwCase {
	type c = struct{ offset, drift float64 }
	cases := []cwCase{
		{"in step", []c{{0, 0}, {0, 0}, {0, 0}}, nil, -1},
		{"one host 10 min ahead", []c{{0, 0}, {600_000, 0}, {0, 0}}, nil, -1},
		{"one host 10 min behind", []c{{0, 0}, {-600_000, 0}, {0, 0}}, nil, -1},
		{"a step back of 10 min", []c{{0, 0}, {0, 0}, {0, 0}}, map[int]map[int64]float64{1: {120_000: -600_000}}, -1},
		// The primary dies on one host only (e2e/clock-worlds.test.mjs).
		{"in step, dead on one host", []c{{0, 0}, {0, 0}, {0, 0}}, nil, 1},
		{"10 min behind, dead on it alone", []c{{0, 0}, {-600_000, 0}, {0, 0}}, nil, 1},
		{"2 min behind, dead on it alone", []c{{0, 0}, {-120_000, 0}, {0, 0}}, nil, 1},
		{"10 min ahead, dead on it alone", []c{{0, 0}, {600_000, 0}, {0, 0}}, nil, 1},
		{"10 min behind, dead on a host in step", []c{{0, 0}, {-600_000, 0}, {0, 0}}, nil, 0},
	}
	for s := 0; s < seeds; s++ {
		rng := rand.New(rand.NewSource(int64(s)))
		cl := make([]c, 3)
		steps := map[int]map[int64]float64{}
		for i := range cl {
			cl[i] = c{float64(rng.Intn(1_200_001) - 600_000), float64(rng.Intn(201)-100) / 1e6}
			if rng.Intn(3) == 0 {
				steps[i] = map[int64]float64{int64(rng.Intn(8000)) * cwTickMs: float64(rng.Intn(1_200_001) - 600_000)}
			}
		}
		cases = append(cases, cwCase{fmt.Sprintf("seed %d", s), cl, steps, rng.Intn(4) - 1})
	}
	return cases
}

func TestClockWorlds(t *testing.T) {
	seeds := 20
	if testing.Short() {
		seeds = 4
	}
	for _, tc := range clockCases(seeds) {
		w := newClockWorld(t, tc.clocks, tc.steps, !wallClockShim, tc.deadOn)
		w.run(rand.New(rand.NewSource(1)))
		dead := 0
		for _, h := range w.hosts {
			dead += h.deadReqs
		}
		t.Logf("%s: %d requests to the dead primary, opens per host %v", tc.name, dead, opensOf(w))
		for _, b := range w.breaks {
			t.Errorf("%s: %s at %s: %s", tc.name, b.inv, fmtT(b.at), b.msg)
		}
	}
}

func opensOf(w *cwWorld) []int {
	out := make([]int, len(w.hosts))
	for i, h := range w.hosts {
		out[i] = len(h.opens)
	}
	return out
}
