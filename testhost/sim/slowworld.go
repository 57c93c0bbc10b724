package sim

import (
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/tidwall/gjson"
)

// The slow-call world (issue #20): channels that turn slow (their first token
// takes 6 to 30 s) and recover, and now and then go down, under sessions
// that come and go. It runs apart from the outage worlds (run.go), whose
// route check knows nothing of slowness, and checks its own invariants:
//
//   - slow-preferred: a new session is never routed to a channel the module
//     holds slow (and not due for its probe) while a channel of its order is
//     certainly routable (its breaker and its provider's closed) and not slow.
//   - slow-legal: the breaker moves closed>slow only after slow.minCalls slow
//     agent-loop calls in a row on that channel (as this world sent them),
//     closes only on a call in time, and half-opens only from slow (or
//     again once the last probe's lease ran out).
//   - every step succeeds and its output parses (module errors are breaks).

// SlowOptions shape one seed of the slow world.
type SlowOptions struct {
	Hours  float64
	Agents int
}

// SlowResult is what one seed of the slow world covered.
type SlowResult struct {
	Seed                                  int64
	Events, Sessions, Slows, Probes, Fast int64 // fast: closed by a call in time
	Moved                                 int64 // new sessions routed off a slow primary
	VirtualMs                             int64
	Breaks                                []string
	Wall                                  time.Duration
}

const (
	slowLimitMs = 5_000
	slowLeaseMs = 10 * 60_000 // policy/circuit.go probeLeaseMs
	slowHorizon = 200         // breaks kept per seed
)

// An agent's next step: a request, its first token, its end.
const (
	slowPhaseReq = iota
	slowPhaseFirst
	slowPhaseEnd
)

type slowChan struct {
	ch              Channel
	slowUntil       int64 // regime: slow until then
	fastUntil       int64 // regime: fast until then
	downUntil       int64 // an outage: failing until then
	streak          int   // slow agent-loop calls in a row, as sent
	lastFast        bool
	state           string // the module's word, from its effects
	probeSince      int64
	pendingFirstTok int // calls whose first token is still to come
}

type slowAgent struct {
	id         string
	n          int
	turns      int
	fresh      bool
	route      Channel // where its last request went (the host proposes it next)
	phase      int
	at         int64
	target     int // index into world.chans
	ttft       int64
	failing    bool
	retryAfter bool
}

type slowWorld struct {
	m       *Module
	r       *rand.Rand
	res     *SlowResult
	now     int64
	chans   []*slowChan
	idx     map[Channel]int
	minC    int
	cool    int64
	agents  []*slowAgent
	nextSID int
}

// RunSlow runs one seed of the slow world.
func RunSlow(rt *testhost.Runtime, seed int64, o SlowOptions) SlowResult {
	start := time.Now()
	res := SlowResult{Seed: seed}
	r := rand.New(rand.NewSource(seed))
	w := &slowWorld{r: r, res: &res, now: Epoch, idx: map[Channel]int{}}
	n := 3 + r.Intn(4)
	provs := []string{"pa", "pb", "pc"}
	var chain []byte
	for i := 0; i < n; i++ {
		c := Channel{provs[i%len(provs)], "m" + strconv.Itoa(i)}
		w.idx[c] = i
		w.chans = append(w.chans, &slowChan{ch: c, state: "closed", fastUntil: Epoch + int64(r.Intn(30*60_000))})
		if i > 0 {
			chain = append(chain, ',')
		}
		chain = appendChannel(chain, c)
	}
	w.minC = 1 + r.Intn(4)
	w.cool = int64(10_000 + r.Intn(110_000))
	cfg := fmt.Sprintf(`{"chain":[%s],"providerThreshold":0,"cooldownMs":%d,"probes":false,"slow":{"firstTokenMs":%d,"minCalls":%d,"moveRunning":%v}}`,
		chain, w.cool, slowLimitMs, w.minC, r.Intn(2) == 0)
	m, err := newModule(rt, cfg)
	if err != nil {
		res.Breaks = append(res.Breaks, "configure: "+err.Error())
		return res
	}
	defer m.close()
	w.m = m
	for i := 0; i < max(1, o.Agents); i++ {
		w.agents = append(w.agents, &slowAgent{id: "s" + strconv.Itoa(i), at: Epoch + int64(r.Intn(60_000))})
	}
	end := Epoch + int64(o.Hours*3600_000)
	for len(res.Breaks) < slowHorizon {
		a := w.agents[0]
		for _, b := range w.agents[1:] {
			if b.at < a.at {
				a = b
			}
		}
		if a.at >= end {
			break
		}
		w.now = a.at
		w.regimes()
		w.act(a)
	}
	res.VirtualMs = w.now - Epoch
	res.Wall = time.Since(start)
	return res
}

// regimes moves each channel between fast and slow, and starts rare outages.
func (w *slowWorld) regimes() {
	for _, c := range w.chans {
		switch {
		case c.slowUntil > 0 && w.now >= c.slowUntil:
			c.slowUntil, c.fastUntil = 0, w.now+int64(5*60_000+w.r.Intn(40*60_000))
		case c.fastUntil > 0 && w.now >= c.fastUntil:
			c.fastUntil, c.slowUntil = 0, w.now+int64(60_000+w.r.Intn(20*60_000))
		}
		if c.downUntil < w.now && w.r.Intn(200_000) == 0 {
			c.downUntil = w.now + int64(30_000+w.r.Intn(3*60_000))
		}
	}
}

func (w *slowWorld) brk(name, format string, args ...any) {
	w.res.Breaks = append(w.res.Breaks, fmt.Sprintf("%s at +%ds: %s", name, (w.now-Epoch)/1000, fmt.Sprintf(format, args...)))
}

func (w *slowWorld) step(fill func(b []byte) []byte) (Output, []byte, bool) {
	w.res.Events++
	out, raw, err := w.m.decide(w.now, fill)
	if err != nil {
		w.brk("step-ok", "%v", err)
		return Output{}, nil, false
	}
	return out, raw, true
}

func (w *slowWorld) act(a *slowAgent) {
	switch a.phase {
	case slowPhaseReq:
		w.request(a)
	case slowPhaseFirst:
		w.firstToken(a)
	default:
		w.end(a)
	}
}

func (w *slowWorld) request(a *slowAgent) {
	if a.turns == 0 && !a.failing { // a new session
		if a.n > 0 {
			w.step(func(b []byte) []byte {
				return append(appendStr(append(b, `{"kind":"disposed","agent":`...), a.sessionID()), '}')
			})
		}
		a.n++
		a.turns, a.fresh, a.route = 1+w.r.Intn(6), true, w.chans[0].ch
		w.res.Sessions++
	}
	var snap []byte
	if a.fresh {
		s, err := w.m.call("snapshot", []byte("{}"))
		if err != nil {
			w.brk("step-ok", "snapshot: %v", err)
			return
		}
		snap = s
	}
	out, _, ok := w.step(func(b []byte) []byte {
		b = appendStr(append(b, `{"kind":"request","agent":`...), a.sessionID())
		return append(appendChannel(append(b, `,"proposed":`...), a.route), '}')
	})
	if !ok {
		return
	}
	target := a.route
	if out.Kind == "swap" {
		target = out.Swap
	}
	ti, known := w.idx[target]
	if !known {
		w.brk("step-ok", "routed to %s, not in the chain", target)
		ti = 0
	}
	if a.fresh { // against what held before this request (its own effects may start a probe)
		w.checkNewSession(snap, ti)
		if ti != 0 {
			w.res.Moved++
		}
	}
	w.effects(out)
	a.fresh, a.route, a.target, a.failing = false, target, ti, false
	c := w.chans[ti]
	if w.now < c.downUntil {
		a.failing, a.phase, a.at = true, slowPhaseEnd, w.now+int64(200+w.r.Intn(2000))
		return
	}
	a.ttft = int64(200 + w.r.Intn(3000))
	if c.slowUntil > 0 {
		a.ttft = int64(6_000 + w.r.Intn(24_000))
	}
	a.phase, a.at = slowPhaseFirst, w.now+a.ttft
}

func (a *slowAgent) sessionID() string { return a.id + "-" + strconv.Itoa(a.n) }

func (w *slowWorld) firstToken(a *slowAgent) {
	c := w.chans[a.target]
	if a.ttft > slowLimitMs {
		c.streak++
		c.lastFast = false
	} else {
		c.streak, c.lastFast = 0, true
	}
	out, _, ok := w.step(func(b []byte) []byte {
		b = appendChannel(append(b, `{"kind":"stream-check","channel":`...), c.ch)
		return fmt.Appendf(b, `,"openedMs":%d,"chunks":1,"lastChunkMs":%d,"cancelled":false,"firstTokenMs":%d}`, w.now-a.ttft, w.now, a.ttft)
	})
	if ok {
		w.effects(out)
	}
	a.phase, a.at = slowPhaseEnd, w.now+int64(500+w.r.Intn(8000))
}

func (w *slowWorld) end(a *slowAgent) {
	if a.failing {
		out, _, ok := w.step(func(b []byte) []byte {
			b = appendStr(append(b, `{"kind":"request-error","agent":`...), a.sessionID())
			b = appendStr(append(b, `,"provider":`...), w.chans[a.target].ch.Provider)
			return fmt.Appendf(b, `,"failure":{"code":"SERVER","status":500},"phase":"after-host","hostRetry":%s,"rand":%d}`, hostRetryJSON, w.r.Int63n(1<<53))
		})
		if !ok {
			return
		}
		w.effects(out)
		switch out.Kind {
		case "retry", "wait":
			a.phase, a.at = slowPhaseReq, w.now+max(1, out.DelayMs)
			return
		}
		a.failing = false // handed back: the turn ended
	} else {
		out, _, ok := w.step(func(b []byte) []byte {
			return append(appendStr(append(b, `{"kind":"settled","agent":`...), a.sessionID()), '}')
		})
		if ok {
			w.effects(out)
		}
	}
	a.turns--
	a.phase, a.at = slowPhaseReq, w.now+int64(1000+w.r.Intn(30_000))
}

// effects follows the module's slow-call breaker and checks its transitions.
func (w *slowWorld) effects(out Output) {
	for _, fx := range out.Effects {
		if fx.Kind != "slow" {
			continue
		}
		i, ok := w.idx[fx.Channel]
		if !ok {
			w.brk("slow-legal", "a slow effect for %s, not in the chain", fx.Channel)
			continue
		}
		c := w.chans[i]
		if fx.From != c.state {
			w.brk("slow-legal", "%s moved from %s, but it was %s", c.ch, fx.From, c.state)
		}
		switch fx.To {
		case "slow":
			if fx.From == "closed" {
				w.res.Slows++
				if c.streak < w.minC {
					w.brk("slow-legal", "%s turned slow after %d slow calls in a row (minCalls %d)", c.ch, c.streak, w.minC)
				}
			} else if fx.From != "half-open" {
				w.brk("slow-legal", "%s: %s>slow", c.ch, fx.From)
			}
		case "half-open":
			w.res.Probes++
			// From slow; or again from half-open once the last probe's lease ran out.
			if fx.From != "slow" && !(fx.From == "half-open" && w.now-c.probeSince >= slowLeaseMs) {
				w.brk("slow-legal", "%s: %s>half-open (probe since +%ds)", c.ch, fx.From, (c.probeSince-Epoch)/1000)
			}
			c.probeSince = w.now
		case "closed":
			w.res.Fast++
			if !c.lastFast {
				w.brk("slow-legal", "%s closed without a call in time", c.ch)
			}
		}
		c.state = fx.To
	}
}

// checkNewSession: the module's own snapshot before the request says which
// channels are slow (and until when) and which breakers are closed.
func (w *slowWorld) checkNewSession(snap []byte, target int) {
	v := gjson.ParseBytes(snap)
	closed := map[Channel]bool{}
	provOpen := map[string]bool{}
	for _, c := range w.chans {
		closed[c.ch] = true
	}
	v.Get("channels").ForEach(func(_, h gjson.Result) bool {
		ch := channelOf(h.Get("channel"))
		if ch.Model == "*" {
			provOpen[ch.Provider] = h.Get("state").String() != "closed"
		} else {
			closed[ch] = h.Get("state").String() == "closed"
		}
		return true
	})
	avoided := map[Channel]bool{}
	v.Get("slow").ForEach(func(_, h gjson.Result) bool {
		ch := channelOf(h.Get("channel"))
		switch h.Get("state").String() {
		case "slow":
			avoided[ch] = w.now < h.Get("untilMs").Int()
		case "half-open":
			avoided[ch] = w.now-w.chans[w.idx[ch]].probeSince < slowLeaseMs
		}
		return true
	})
	t := w.chans[target].ch
	if !avoided[t] {
		return
	}
	for _, c := range w.chans {
		if c.ch != t && closed[c.ch] && !provOpen[c.ch.Provider] && !avoided[c.ch] && !w.slowShown(v, c.ch) {
			w.brk("slow-preferred", "a new session went to slow %s while %s was routable and not slow", t, c.ch)
			return
		}
	}
}

// slowShown: the snapshot lists ch as slow or half-open (a probe due is still slow).
func (w *slowWorld) slowShown(v gjson.Result, ch Channel) bool {
	shown := false
	v.Get("slow").ForEach(func(_, h gjson.Result) bool {
		if channelOf(h.Get("channel")) == ch {
			s := h.Get("state").String()
			shown = s == "slow" || s == "half-open"
			return false
		}
		return true
	})
	return shown
}
