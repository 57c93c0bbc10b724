package sim

import (
	"fmt"
	"maps"
	"math/rand"
	"slices"
	"strings"

	"github.com/tidwall/gjson"
)

// Where routing features meet (issue #17): user model picks, pools with
// balance readings, chain sessions with readings, and restarts of sessions on
// a failover route. Some agents select their model as the web host does: the
// user's pick, else the route their log last used (the plugin's own choice),
// so after a restart they propose their sticky failover route; the others
// propose their turn's channel every time, as headless does. The sim plays
// the shim's part for the session's home and pick: it keeps what the module
// reports (failover home, session-route, returned) and hands it back with
// restore-route at the agent's first request after a restart.

// routeWorld draws the new worlds' config keys and ops from their own stream,
// so a seed's older ops stay as they were.
type routeWorld struct {
	pools     [][]int // channel indices of pool "main" (and "spare")
	balances  []string
	minRemain float64
}

const (
	readingRefreshMs = 600_000
	minRemaining     = 1
)

func drawRouteWorld(seed int64, chs []Channel, chain []int) routeWorld {
	r := rand.New(rand.NewSource(seed ^ 0x5eed_17))
	var w routeWorld
	if r.Intn(3) == 0 {
		return w // a third of the worlds: no pools, no readings
	}
	provs := map[string]bool{}
	for _, c := range chs {
		provs[c.Provider] = true
	}
	for _, i := range r.Perm(len(chain))[:min(len(chain), 1+r.Intn(2))] {
		w.balances = append(w.balances, chs[chain[i]].Provider)
	}
	w.balances = dedupe(w.balances)
	if r.Intn(2) == 0 {
		perm := r.Perm(len(chs))
		w.pools = append(w.pools, perm[:min(len(chs), 2+r.Intn(2))])
	}
	return w
}

func dedupe(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// configKeys is the world's part of the config row: pools and balance scripts.
func (w routeWorld) configKeys(chs []Channel) string {
	if len(w.balances) == 0 && len(w.pools) == 0 {
		return ""
	}
	var b []byte
	if len(w.pools) > 0 {
		b = append(b, `,"pools":[`...)
		for i, p := range w.pools {
			if i > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"name":"pool-%d","routes":[`, i)
			for j, c := range p {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendChannel(b, chs[c])
			}
			b = append(b, "]}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `,"quota":{"longTermDelayMs":600000,"balances":[`...)
	for i, p := range w.balances {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"provider":`...)
		b = appendStr(b, p)
		b = fmt.Appendf(b, `,"script":["balance"],"refreshMs":%d,"minimumRemaining":%d}`, readingRefreshMs, minRemaining)
	}
	return string(append(b, "]}"...))
}

// routeOps adds user picks and balance readings to a schedule.
func routeOps(seed int64, s *Schedule, w routeWorld, agents int, add func(Op)) {
	r := rand.New(rand.NewSource(seed ^ 0x9a11_17))
	nch := len(s.Channels)
	for t := int64(0); t < s.EndMs; {
		t += int64(r.ExpFloat64() * 3600_000 / 4) // about four picks an hour
		i := r.Intn(agents)
		add(Op{At: t, Kind: OpPick, Agent: fmt.Sprintf("%s-%d", agentPool[i%len(agentPool)], i), Ch: r.Intn(nch)})
	}
	for _, p := range w.balances {
		for t := int64(r.Intn(60_000)); t < s.EndMs; t += int64(60_000 + r.Intn(600_000)) {
			add(Op{At: t, Kind: OpReading, Prov: p, N: []int{0, 0, 5, 100}[r.Intn(4)]})
		}
	}
	switchOps(seed, s, w, agents, add) // quotaworld.go: drawn last, from their own stream
}

// parseRoutes reads the config's pools and balance providers.
func (r *runner) parseRoutes(v gjson.Result) {
	v.Get("pools").ForEach(func(_, p gjson.Result) bool {
		var routes []Channel
		p.Get("routes").ForEach(func(_, c gjson.Result) bool {
			routes = append(routes, channelOf(c))
			return true
		})
		r.cfg.pools = append(r.cfg.pools, routes)
		return true
	})
	r.cfg.balances = map[string]bool{}
	v.Get("quota.balances").ForEach(func(_, b gjson.Result) bool {
		r.cfg.balances[b.Get("provider").String()] = true
		return true
	})
	r.cfg.stay = v.Get("recovery").String() == "stay"
	r.readings = map[string]simReading{}
}

type simReading struct {
	at        int64
	remaining float64
}

// reading hands a balance script's result to the module.
func (r *runner) reading(op *Op) {
	r.readings[op.Prov] = simReading{r.now, float64(op.N)}
	r.decide("balance-reading", Channel{}, nil, func(b []byte) []byte {
		b = append(b, `{"kind":"balance-reading","provider":`...)
		b = appendStr(b, op.Prov)
		return fmt.Appendf(b, `,"ok":true,"remaining":%d}`, op.N)
	})
}

// low reports a fresh reading below the minimum.
func (r *runner) low(provider string) bool {
	rd, ok := r.readings[provider]
	return ok && r.cfg.balances[provider] && r.now-rd.at < readingRefreshMs && rd.remaining < minRemaining
}

// pick is the user choosing a model for the agent's session.
func (r *runner) pick(op *Op) {
	a := r.agent(op.Agent)
	a.pick = r.s.Channels[op.Ch]
	a.pickTold = false
}

// proposal is what the host proposes for the agent's next request.
func (a *simAgent) proposal() Channel {
	switch {
	case a.pick != (Channel{}):
		return a.pick
	case a.web && a.header != (Channel{}):
		return a.header
	}
	return a.home
}

// noteRoutes plays the shim: it keeps each agent's home and pick as the module reports them.
func (r *runner) noteRoutes(out Output) {
	for _, fx := range out.Effects {
		a := r.agents[fx.Agent]
		if a == nil {
			continue
		}
		switch fx.Kind {
		case "failover":
			a.savedHome = fx.FromCh
			if fx.Home != (Channel{}) {
				a.savedHome = fx.Home
			}
			a.pickFailovers++
		case "spill":
			// The rest of a spilled request stays off the pick (spillAfter), as after a failover.
			a.pickFailovers++
		case "returned":
			a.savedHome = Channel{}
		case "session-route":
			a.savedHome, a.savedPick = fx.Home, fx.Pick
		}
	}
}

// restoreRoute hands the agent's kept home and pick to a new instance, before its first request there.
func (r *runner) restoreRoute(a *simAgent) {
	if !a.needRestore {
		return
	}
	if r.noRestoreRoute {
		a.needRestore, a.pickTold = false, false
		return
	}
	a.needRestore = false
	if a.savedHome == (Channel{}) && a.savedPick == (Channel{}) {
		return
	}
	a.proposed[a.savedHome], a.proposed[a.savedPick] = true, true // its homes again
	_, in, err := r.m.decide(r.now, func(b []byte) []byte {
		b = append(b, `{"kind":"restore-route","agent":`...)
		b = appendStr(b, a.id)
		if a.savedHome != (Channel{}) {
			b = append(b, `,"home":`...)
			b = appendChannel(b, a.savedHome)
		}
		if a.savedPick != (Channel{}) {
			b = append(b, `,"pick":`...)
			b = appendChannel(b, a.savedPick)
		}
		return append(b, '}')
	})
	r.res.Events++
	if err != nil {
		if strings.Contains(err.Error(), "unknown event kind") {
			r.noRestoreRoute = true // a module from before restore-route: its shim had nothing to restore
			a.pickTold = false
			return
		}
		r.brk("export-error", "restore-route: %v (input %s)", err, clip(string(in)))
		return
	}
	a.modHome, a.modPick, a.modRestored = a.savedHome, a.savedPick, a.savedHome != (Channel{})
}

// usable is what the route checks call a channel a request may go to: its
// breaker and its provider's closed, no fresh low reading, and no outage
// in force that the host may have told the module it cannot serve.
func (r *runner) usable(ch Channel) bool {
	return r.closed(ch) && !r.low(ch.Provider) && !r.unavailable(ch)
}

// unavailable: unavail.go.

// poolOf is the one pool holding ch, or nil.
func (r *runner) poolOf(ch Channel) []Channel {
	var found []Channel
	n := 0
	for _, p := range r.cfg.pools {
		for _, c := range p {
			if c == ch {
				found = p
				n++
			}
		}
	}
	if n != 1 {
		return nil
	}
	return found
}

// checkRouteWorld holds a request's target against the new invariants.
// prop is what the host proposed; first says the agent's very first request.
func (r *runner) checkRouteWorld(a *simAgent, prop, target Channel, first, pickNews, afterRestart bool) {
	if a.pick != (Channel{}) && pickNews {
		a.pickTold, a.pickFailovers = true, 0
	}
	// An explicit user pick is never overridden: while it is usable and the
	// session has not failed over since, its requests go to it.
	if a.pickTold && a.pick == prop && a.pickFailovers == 0 && r.usable(a.pick) && r.fitsOwn(a, a.pick) && target != a.pick {
		r.brk("pick-honoured", "agent %q picked %s (usable), but its request went to %s", a.id, a.pick, target)
	}
	// A new session never starts on a provider whose fresh reading is below
	// its minimum while another preference is usable.
	if first && r.low(target.Provider) {
		alts := append([]Channel{prop}, r.cfg.chain...)
		if p := r.poolOf(prop); p != nil && len(r.cfg.balances) > 0 {
			alts = append([]Channel{prop}, p...)
		}
		if r.backup != nil {
			alts = append(alts, *r.backup)
		}
		for i, c := range alts {
			if r.usable(c) && !r.trkHeld(c) && r.fits(a, c, i == 0) { // fit.go: too small is not usable for it
				r.brk("new-session-reading", "new agent %q started on %s, whose fresh reading is below its minimum, while %s was usable", a.id, target, c)
				break
			}
		}
	}
	// A session's home is the same before and after a restart: a session that
	// left home, first thing after the restart, goes home when home is usable.
	// (Pool worlds are left out: a session the host proposes a pool route
	// for walks that pool, and its chain home is not where it goes back.)
	// Only web agents: a headless agent's new turn on another channel is the
	// user's choice, which its first request after a restart cannot show.
	if afterRestart && a.web && a.header == prop && !r.cfg.stay && len(r.cfg.pools) == 0 && a.homeBefore != (Channel{}) && a.pick == (Channel{}) && r.usable(a.homeBefore) && r.fitsOwn(a, a.homeBefore) &&
		!r.trkHeld(a.homeBefore) && target != a.homeBefore {
		r.brk("home-kept", "agent %q left home %s before the restart; after it, home usable, its request went to %s", a.id, a.homeBefore, target)
	}
}

// trkHeld reports a half-open channel whose probe slot someone holds.
func (r *runner) trkHeld(ch Channel) bool {
	b := r.track[ch]
	return b != nil && b.state == "half-open" && b.holder != ""
}

// readingEvents hands a new instance the latest readings, as the shim's
// first balance run at boot would (it runs every script at once). That run is
// a new reading, taken now: the picture dates it so too (seed 39: dated at
// its first run, the checker saw it stale minutes before the module did).
// A stale reading is handed over too: the boot run reads every provider,
// and the old instance's pool route choice still went by the stale value
// (seed 15: restore-same-decisions, a rebuild 10 min 19 s after a low reading).
//
// m nil: the running instance, the readings going through decide, their
// effects carried out and checked like any step's; otherwise an instance
// only compared with it, whose effects are not the world's.
//
// In the providers' order: a map's order differs from run to run, and the
// readings' effects (a provider closing on a restored balance, a refresh
// scheduled) followed it, so a seed's event count moved by one between
// runs of one build (make sim, Dec 2026).
func (r *runner) readingEvents(m *Module) {
	for _, p := range slices.Sorted(maps.Keys(r.readings)) {
		rd := r.readings[p]
		r.readings[p] = simReading{r.now, rd.remaining}
		ev := func(b []byte) []byte {
			b = append(b, `{"kind":"balance-reading","provider":`...)
			b = appendStr(b, p)
			return fmt.Appendf(b, `,"ok":true,"remaining":%g}`, rd.remaining)
		}
		if m == nil {
			r.decide("balance-reading", Channel{}, nil, ev)
			continue
		}
		r.res.Events++
		if _, in, err := m.decide(r.now, ev); err != nil {
			r.brk("export-error", "balance-reading: %v (input %s)", err, clip(string(in)))
		}
	}
}
