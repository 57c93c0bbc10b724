package sim

import (
	"fmt"
	"math/rand"
	"strconv"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/tidwall/gjson"
)

// The hedge world (issue #36): channels whose first token turns slow (6 to
// 30 s) and recovers, and now and then go down, under sessions whose
// agent-loop calls the module may hedge (policy/hedge.go). The world plays
// the shim's part (host-shim/stall.js): a stream-check when a call opens and
// at every wake the module asks for, with the call's agent; a hedge sent when
// a check's verdict carries one, raced against the call; the race's end
// reported as hedge-result, as the shim reports it; the check at the first
// chunk. Its invariants:
//
//   - hedge-one-answer: never two answers reach one session. A hedge is sent
//     only for a call with no chunk yet that no hedge is racing or raced (a
//     hedge of a call that answered, or a second hedge, would put a second
//     answer in flight); each race ends in exactly one `hedge` effect, at
//     its hedge-result, naming the race's channels and the winner the shim
//     reported, and no `hedge` effect comes without a race.
//   - hedge-budget: hedges from a provider in its budget's window (the last
//     minute, in six 10-second slots as policy/budget.go counts) stay within
//     hedge.budgetFloor + hedge.budgetPercent % of the requests routed to it
//     in that window, counted here from the requests this world sent.
//   - hedge-target: a hedge goes only where the module's own failover would
//     send the session at that moment: the `view` export's next target
//     (policy/view.go: the same preferences and walk a failover makes), asked
//     just before the check. Never to a channel whose breaker (or its
//     provider's) is not closed, never when the view names no next target.
//     When the view's next is held slow by the slow-call breaker, a hedge
//     skips it (it would be as slow) for a channel that is not held slow.
//   - every step succeeds (module errors are breaks).

// HedgeOptions shape one seed of the hedge world.
type HedgeOptions struct {
	Hours  float64
	Agents int
}

// HedgeResult is what one seed of the hedge world covered.
type HedgeResult struct {
	Seed                        int64
	Events, Requests, Sessions  int64
	Hedges                      int64 // hedges sent
	WonHedge, WonPrimary, NoWin int64 // how the races ended
	Refused                     int64 // due checks the module did not hedge (budget, no target, half-open)
	TargetChecks                int64 // hedges held to the view's next target
	VirtualMs                   int64
	Breaks                      []string
	Wall                        time.Duration
}

const hedgeHorizon = 200 // breaks kept per seed

type hedgeChan struct {
	ch        Channel
	slowUntil int64
	fastUntil int64
	downUntil int64
}

// hedgeCall is an agent's call in flight, as the shim's StallWatcher holds it.
type hedgeCall struct {
	ch       Channel
	opened   int64
	tokenAt  int64 // the primary's first token; 0: it fails at failAt
	failAt   int64
	checkAt  int64 // the module's next wake for the call; 0: none
	chunks   int
	hedged   bool // a hedge was sent (never again)
	racing   bool // the hedge is racing the call
	hTo      Channel
	hSent    int64
	hTokenAt int64 // the hedge's first token; 0: it fails at hFailAt
	hFailAt  int64
	answers  int   // answers that reached the session
	endAt    int64 // after its first chunk: when the call ends
}

type hedgeAgent struct {
	id    string
	n     int
	turns int
	route Channel // where its last request went
	at    int64   // its next request, when no call is in flight
	call  *hedgeCall
}

type hedgeWorld struct {
	m      *Module
	r      *rand.Rand
	res    *HedgeResult
	now    int64
	chans  []*hedgeChan
	idx    map[Channel]int
	agents []*hedgeAgent
	// the budget's window per provider, as policy/budget.go slots it
	slot     map[string]int64
	requests map[string]*[budgetWindowSlots]int
	hedges   map[string]*[budgetWindowSlots]int
	pct      int
	floor    int
	race     map[string]bool // agents whose race has not ended (a hedge effect is due)
	backup   *Channel        // the user's backup, when the seed chose one
}

const (
	budgetWindowSlots = 6
	budgetSlotMs      = 10_000
)

// RunHedge runs one seed of the hedge world.
func RunHedge(rt *testhost.Runtime, seed int64, o HedgeOptions) HedgeResult {
	start := time.Now()
	res := HedgeResult{Seed: seed}
	r := rand.New(rand.NewSource(seed))
	w := &hedgeWorld{r: r, res: &res, now: Epoch, idx: map[Channel]int{}, slot: map[string]int64{},
		requests: map[string]*[budgetWindowSlots]int{}, hedges: map[string]*[budgetWindowSlots]int{}, race: map[string]bool{}}
	n := 3 + r.Intn(3)
	provs := []string{"pa", "pb", "pc"}
	var chain []byte
	for i := 0; i < n; i++ {
		c := Channel{provs[i%len(provs)], "m" + strconv.Itoa(i)}
		w.idx[c] = i
		w.chans = append(w.chans, &hedgeChan{ch: c, fastUntil: Epoch + int64(r.Intn(20*60_000))})
		if i > 0 {
			chain = append(chain, ',')
		}
		chain = appendChannel(chain, c)
	}
	w.pct = []int{0, 5, 10, 20, 50}[r.Intn(5)]
	w.floor = r.Intn(4)
	if w.pct == 0 && w.floor == 0 {
		w.floor = 1
	}
	hedge := fmt.Sprintf(`"afterMs":%d`, 500+r.Intn(7500))
	if r.Intn(2) == 0 { // the learned delay
		lo := 500 + r.Intn(1500)
		hedge = fmt.Sprintf(`"afterPercentile":%d,"minMs":%d,"maxMs":%d`, []int{50, 75, 90, 95}[r.Intn(4)], lo, lo+3000+r.Intn(15000))
	}
	slow := ""
	if r.Intn(2) == 0 { // the slow-call breaker too: hedge results feed it
		slow = fmt.Sprintf(`,"slow":{"firstTokenMs":5000,"minCalls":%d}`, 1+r.Intn(4))
	}
	if r.Intn(3) == 0 { // a won hedge keeps the session where it answered (policy/hedge.go hostProposal)
		slow += `,"recovery":"stay"`
	}
	cfg := fmt.Sprintf(`{"chain":[%s],"providerThreshold":0,"cooldownMs":%d,"probes":false,"hedge":{%s,"budgetPercent":%d,"budgetFloor":%d}%s}`,
		chain, 10_000+r.Intn(110_000), hedge, w.pct, w.floor, slow)
	m, err := newModule(rt, cfg)
	if err != nil {
		res.Breaks = append(res.Breaks, "configure: "+err.Error())
		return res
	}
	defer m.close()
	w.m = m
	if r.Intn(2) == 0 { // a backup: a failover's second preference, so a hedge's
		b := w.chans[1+r.Intn(n-1)].ch
		w.backup = &b
		w.decide(func(in []byte) []byte {
			return append(appendChannel(append(in, `{"kind":"set-backup","channel":`...), b), '}')
		})
	}
	for i := 0; i < max(1, o.Agents); i++ {
		w.agents = append(w.agents, &hedgeAgent{id: "h" + strconv.Itoa(i), at: Epoch + int64(r.Intn(60_000))})
	}
	end := Epoch + int64(o.Hours*3600_000)
	for len(res.Breaks) < hedgeHorizon {
		var a *hedgeAgent
		var at int64
		for _, b := range w.agents {
			if t := b.next(); a == nil || t < at {
				a, at = b, t
			}
		}
		if at >= end {
			break
		}
		w.now = at
		w.regimes()
		w.act(a)
	}
	res.VirtualMs = w.now - Epoch
	res.Wall = time.Since(start)
	return res
}

// next is when the agent acts next: its next request, or its call's next event.
func (a *hedgeAgent) next() int64 {
	c := a.call
	if c == nil {
		return a.at
	}
	if c.chunks > 0 {
		return c.endAt
	}
	t := c.failAt
	if c.tokenAt > 0 {
		t = c.tokenAt
	}
	if c.racing {
		h := c.hFailAt
		if c.hTokenAt > 0 {
			h = c.hTokenAt
		}
		t = min(t, h)
	}
	if c.checkAt > 0 && c.checkAt < t {
		t = c.checkAt
	}
	return t
}

func (w *hedgeWorld) regimes() {
	for _, c := range w.chans {
		switch {
		case c.slowUntil > 0 && w.now >= c.slowUntil:
			c.slowUntil, c.fastUntil = 0, w.now+int64(3*60_000+w.r.Intn(30*60_000))
		case c.fastUntil > 0 && w.now >= c.fastUntil:
			c.fastUntil, c.slowUntil = 0, w.now+int64(60_000+w.r.Intn(15*60_000))
		}
		if c.downUntil < w.now && w.r.Intn(60_000) == 0 {
			c.downUntil = w.now + int64(30_000+w.r.Intn(3*60_000))
		}
	}
}

func (w *hedgeWorld) brk(name, format string, args ...any) {
	w.res.Breaks = append(w.res.Breaks, fmt.Sprintf("%s at +%ds: %s", name, (w.now-Epoch)/1000, fmt.Sprintf(format, args...)))
}

// decide is one step whose whole output is read (the hedge's fields are not in Output).
func (w *hedgeWorld) decide(fill func(b []byte) []byte) (gjson.Result, bool) {
	w.res.Events++
	b := append([]byte(`{"nowMs":`), strconv.AppendInt(nil, w.now, 10)...)
	b = fill(append(b, `,"event":`...))
	out, err := w.m.call("decide", append(b, '}'))
	if err != nil {
		w.brk("step-ok", "%v", err)
		return gjson.Result{}, false
	}
	v := gjson.ParseBytes(out)
	v.Get("effects").ForEach(func(_, fx gjson.Result) bool {
		if fx.Get("kind").String() == "hedge" && !w.race[fx.Get("agent").String()] {
			w.brk("hedge-one-answer", "a hedge effect for %s, whose call no hedge was racing: %s", fx.Get("agent"), fx.Raw)
		}
		return true
	})
	return v, true
}

func (w *hedgeWorld) act(a *hedgeAgent) {
	c := a.call
	switch {
	case c == nil:
		w.request(a)
	case c.chunks > 0:
		w.end(a, false)
	default:
		h, p := c.hFailAt, c.failAt
		if c.hTokenAt > 0 {
			h = c.hTokenAt
		}
		if c.tokenAt > 0 {
			p = c.tokenAt
		}
		switch {
		case c.checkAt > 0 && c.checkAt <= w.now && c.checkAt < p && (!c.racing || c.checkAt < h):
			c.checkAt = 0
			w.check(a)
		case c.racing && h <= w.now && h < p:
			if c.hTokenAt > 0 {
				w.firstChunk(a, true)
			} else {
				w.raceEnd(a, "none", 0, "hedge-failed", "SERVER")
			}
		case c.tokenAt > 0:
			w.firstChunk(a, false)
		default: // the call ends without a token: its failure goes to the host
			if c.racing {
				w.raceEnd(a, "none", 0, "primary-ended", "")
			}
			w.end(a, true)
		}
	}
}

// ttft draws a first token on ch, as its regime has it; 0 when ch is down.
func (w *hedgeWorld) ttft(ch Channel) int64 {
	c := w.chans[w.idx[ch]]
	if w.now < c.downUntil {
		return 0
	}
	if c.slowUntil > 0 {
		return int64(6_000 + w.r.Intn(24_000))
	}
	return int64(200 + w.r.Intn(2800))
}

func (w *hedgeWorld) request(a *hedgeAgent) {
	if a.turns == 0 { // a new session
		if a.n > 0 {
			w.decide(func(b []byte) []byte {
				return append(appendStr(append(b, `{"kind":"disposed","agent":`...), a.sessionID()), '}')
			})
		}
		a.n++
		// The host starts a session where the user chose (its home): the
		// primary mostly, another channel of the chain now and then.
		a.turns, a.route = 1+w.r.Intn(8), w.chans[0].ch
		if w.r.Intn(3) == 0 {
			a.route = w.chans[w.r.Intn(len(w.chans))].ch
		}
		w.res.Sessions++
	}
	v, ok := w.decide(func(b []byte) []byte {
		b = appendStr(append(b, `{"kind":"request","agent":`...), a.sessionID())
		return append(appendChannel(append(b, `,"proposed":`...), a.route), '}')
	})
	if !ok {
		a.at = w.now + 1000
		return
	}
	target := a.route
	if vd := v.Get("verdict"); vd.Get("kind").String() == "swap" {
		target = channelOf(vd)
	}
	if _, known := w.idx[target]; !known {
		w.brk("step-ok", "routed to %s, not in the chain", target)
		target = w.chans[0].ch
	}
	w.res.Requests++
	w.count(w.requests, target.Provider)
	a.route = target
	c := &hedgeCall{ch: target, opened: w.now}
	if t := w.ttft(target); t > 0 {
		c.tokenAt = w.now + t
	} else {
		c.failAt = w.now + int64(200+w.r.Intn(2000))
	}
	a.call = c
	w.check(a) // the check as the call opens
}

func (a *hedgeAgent) sessionID() string { return a.id + "-" + strconv.Itoa(a.n) }

// streamCheck is the shim's check of a call (events.js streamCheckEvent).
func (w *hedgeWorld) streamCheck(a *hedgeAgent, ch Channel, firstToken int64) func([]byte) []byte {
	c := a.call
	return func(b []byte) []byte {
		b = appendChannel(append(b, `{"kind":"stream-check","channel":`...), ch)
		b = fmt.Appendf(b, `,"openedMs":%d,"chunks":%d,"cancelled":false`, c.opened, c.chunks)
		if c.chunks > 0 {
			b = fmt.Appendf(b, `,"lastChunkMs":%d`, w.now)
		}
		if firstToken > 0 {
			b = fmt.Appendf(b, `,"firstTokenMs":%d`, firstToken)
		}
		if c.hedged {
			b = append(b, `,"hedging":true`...)
		}
		return append(appendStr(append(b, `,"agent":`...), a.sessionID()), '}')
	}
}

// check asks the module about a call with no chunk yet, and follows its
// verdict: a wake, a hedge.
func (w *hedgeWorld) check(a *hedgeAgent) {
	c := a.call
	// What a failover would do now, asked before the step (which may hedge).
	var view, snap gjson.Result
	if !c.hedged {
		out, err := w.m.call("view", fmt.Appendf(appendStr(fmt.Appendf(nil, `{"nowMs":%d,"agent":`, w.now), a.sessionID()), "}"))
		if err != nil {
			w.brk("step-ok", "view: %v", err)
			return
		}
		view = gjson.ParseBytes(out)
		s, err := w.m.call("snapshot", []byte("{}"))
		if err != nil {
			w.brk("step-ok", "snapshot: %v", err)
			return
		}
		snap = gjson.ParseBytes(s)
	}
	v, ok := w.decide(w.streamCheck(a, c.ch, 0))
	if !ok {
		return
	}
	vd := v.Get("verdict")
	c.checkAt = 0
	if at := vd.Get("atMs").Int(); vd.Get("kind").String() == "watch" && at > 0 {
		c.checkAt = max(at, w.now+1)
	}
	h := vd.Get("hedge")
	if !h.Exists() {
		if !c.hedged && w.dueNow(c) {
			w.res.Refused++
		}
		return
	}
	to := channelOf(h)
	if c.hedged {
		w.brk("hedge-one-answer", "%s: a second hedge (to %s) of a call already hedged to %s", a.sessionID(), to, c.hTo)
		return // the shim sends one hedge per call
	}
	w.sent(a, to, view, snap)
}

// dueNow: the check came at or after the module's own hedge wake (a check
// at the call's opening is never due unless the delay is 0).
func (w *hedgeWorld) dueNow(c *hedgeCall) bool { return w.now > c.opened }

// sent holds a hedge to the invariants and starts its race.
func (w *hedgeWorld) sent(a *hedgeAgent, to Channel, view, snap gjson.Result) {
	c := a.call
	w.res.Hedges++
	if c.chunks > 0 {
		w.brk("hedge-one-answer", "%s: a hedge to %s of a call that has answered (%d chunks)", a.sessionID(), to, c.chunks)
	}
	// hedge-budget: this hedge included, within floor + pct % of the window's requests.
	p := c.ch.Provider
	w.advance(p)
	req, hed := sum(w.requests[p]), sum(w.hedges[p])
	if hed+1 > w.floor+req*w.pct/100 {
		w.brk("hedge-budget", "%s: hedge %d from provider %s in its window, with %d requests (budgetPercent %d, budgetFloor %d)",
			a.sessionID(), hed+1, p, req, w.pct, w.floor)
	}
	w.count(w.hedges, p)
	w.target(a, to, view, snap)
	c.hedged, c.racing, c.hTo, c.hSent = true, true, to, w.now
	w.race[a.sessionID()] = true
	if _, known := w.idx[to]; !known {
		c.hFailAt = w.now + 100
		return
	}
	if t := w.ttft(to); t > 0 {
		c.hTokenAt = w.now + t
	} else {
		c.hFailAt = w.now + int64(200+w.r.Intn(2000))
	}
	// Now and then a check while the race runs, as a shim asks when its
	// timer fires early (a wall-clock step): the module has said where it
	// hedged, and must not hedge again.
	if w.r.Intn(4) == 0 {
		end := max(c.hTokenAt, c.hFailAt)
		if c.tokenAt > 0 {
			end = min(end, c.tokenAt)
		} else {
			end = min(end, c.failAt)
		}
		if end > w.now+1 {
			at := w.now + 1 + w.r.Int63n(end-w.now-1)
			if c.checkAt == 0 || at < c.checkAt {
				c.checkAt = at
			}
		}
	}
}

// target holds a hedge to where the module's failover would go now.
func (w *hedgeWorld) target(a *hedgeAgent, to Channel, view, snap gjson.Result) {
	c := a.call
	w.res.TargetChecks++
	if to == c.ch {
		w.brk("hedge-target", "%s: hedged to the channel it is on, %s", a.sessionID(), to)
		return
	}
	if _, known := w.idx[to]; !known {
		w.brk("hedge-target", "%s: hedged to %s, not in the chain", a.sessionID(), to)
		return
	}
	next := view.Get("next.channel")
	if !next.Exists() {
		w.brk("hedge-target", "%s: hedged to %s where a failover finds no channel: %s", a.sessionID(), to, view.Raw)
		return
	}
	if !w.closedIn(snap, to) {
		w.brk("hedge-target", "%s: hedged to %s, whose breaker is not closed", a.sessionID(), to)
	}
	want := channelOf(next)
	if to == want {
		return
	}
	// The failover's next is as slow as the call: the hedge walks on past it,
	// in the failover's own order (the session's home when it is away, the
	// backup, then the chain), to the first channel not held slow.
	order := []Channel{}
	if h := view.Get("home"); h.Exists() {
		order = append(order, channelOf(h))
	}
	if w.backup != nil {
		order = append(order, *w.backup)
	}
	for _, ch := range w.chans {
		order = append(order, ch.ch)
	}
	from := -1
	for i, ch := range order {
		if ch == want {
			from = i
			break
		}
	}
	if from < 0 || !w.slowAvoided(snap, want) {
		w.brk("hedge-target", "%s: hedged %s to %s, but a failover would go to %s", a.sessionID(), c.ch, to, want)
		return
	}
	for _, ch := range order[from:] {
		switch {
		case ch == to:
			return
		case ch == c.ch || w.slowAvoided(snap, ch) || !w.closedIn(snap, ch):
			continue
		}
		w.brk("hedge-target", "%s: hedged %s to %s past %s, which a failover could take and is not held slow (the failover's next, %s, is)",
			a.sessionID(), c.ch, to, ch, want)
		return
	}
	w.brk("hedge-target", "%s: hedged %s to %s, outside the failover's order after %s", a.sessionID(), c.ch, to, want)
}

// closedIn: the snapshot holds ch's breaker and its provider's closed (or has none).
func (w *hedgeWorld) closedIn(snap gjson.Result, ch Channel) bool {
	closed := true
	snap.Get("channels").ForEach(func(_, h gjson.Result) bool {
		c := channelOf(h.Get("channel"))
		if (c == ch || c == Channel{ch.Provider, "*"}) && h.Get("state").String() != "closed" {
			closed = false
		}
		return true
	})
	return closed
}

// slowAvoided: the slow-call breaker keeps calls off ch now (policy/slow.go
// avoided): slow until a time still to come, or half-open (its probe's lease
// is not in the snapshot: a half-open channel counts as held).
func (w *hedgeWorld) slowAvoided(snap gjson.Result, ch Channel) bool {
	held := false
	snap.Get("slow").ForEach(func(_, h gjson.Result) bool {
		if channelOf(h.Get("channel")) == ch {
			switch h.Get("state").String() {
			case "slow":
				held = w.now < h.Get("untilMs").Int()
			case "half-open":
				held = true
			}
			return false
		}
		return true
	})
	return held
}

// firstChunk: the call's first chunk, from the primary or its hedge. A race
// ends at once: the loser is aborted, and only the winner's chunks go on.
func (w *hedgeWorld) firstChunk(a *hedgeAgent, hedge bool) {
	c := a.call
	ch, first := c.ch, w.now-c.opened
	if c.racing {
		if hedge {
			ch = c.hTo
			w.raceEnd(a, "hedge", w.now-c.hSent, "", "")
		} else {
			w.raceEnd(a, "primary", first, "", "")
		}
		first = 0 // a hedged call's first token went in its hedge-result
	} else if c.hedged {
		first = 0 // its hedge failed: the call went on alone, its sample is not taken twice
	}
	c.chunks = 1
	c.answers++
	if c.answers > 1 {
		w.brk("hedge-one-answer", "%s: %d answers reached the session", a.sessionID(), c.answers)
	}
	if v, ok := w.decide(w.streamCheck(a, ch, first)); ok {
		if h := v.Get("verdict.hedge"); h.Exists() {
			w.brk("hedge-one-answer", "%s: a hedge (to %s) of a call that has answered", a.sessionID(), channelOf(h))
		}
	}
	// Now and then an idle check mid-stream, as the watchdog sends them.
	c.chunks = 2 + w.r.Intn(20)
	if w.r.Intn(3) == 0 {
		if v, ok := w.decide(w.streamCheck(a, ch, 0)); ok {
			if h := v.Get("verdict.hedge"); h.Exists() {
				w.brk("hedge-one-answer", "%s: a hedge (to %s) mid-stream, after %d chunks", a.sessionID(), channelOf(h), c.chunks)
			}
		}
	}
	c.endAt = w.now + int64(500+w.r.Intn(8000))
}

// raceEnd reports a race's end (events.js hedgeResultEvent) and holds the
// `hedge` effect to it: exactly one, for this race, with its winner.
func (w *hedgeWorld) raceEnd(a *hedgeAgent, winner string, first int64, end, code string) {
	c := a.call
	c.racing = false
	switch winner {
	case "hedge":
		w.res.WonHedge++
	case "primary":
		w.res.WonPrimary++
	default:
		w.res.NoWin++
		c.hTokenAt, c.hFailAt = 0, 0
	}
	v, ok := w.decide(func(b []byte) []byte {
		b = appendStr(append(b, `{"kind":"hedge-result","agent":`...), a.sessionID())
		b = fmt.Appendf(b, `,"winner":%q,"openedMs":%d`, winner, c.opened)
		if winner != "none" {
			b = fmt.Appendf(b, `,"firstTokenMs":%d`, first)
		}
		if end != "" {
			b = fmt.Appendf(b, `,"end":%q`, end)
		}
		if code != "" {
			b = fmt.Appendf(b, `,"code":%q`, code)
		}
		return append(b, '}')
	})
	delete(w.race, a.sessionID())
	if !ok {
		return
	}
	n := 0
	v.Get("effects").ForEach(func(_, fx gjson.Result) bool {
		if fx.Get("kind").String() != "hedge" {
			return true
		}
		n++
		if channelOf(fx.Get("from")) != c.ch || channelOf(fx.Get("to")) != c.hTo || fx.Get("winner").String() != winner {
			w.brk("hedge-one-answer", "%s: the race %s>%s won by %s was reported as %s", a.sessionID(), c.ch, c.hTo, winner, fx.Raw)
		}
		return true
	})
	if n != 1 {
		w.brk("hedge-one-answer", "%s: %d hedge effects for one race", a.sessionID(), n)
	}
}

// end: the call ends, answered (settled) or failed (its failure to the host).
func (w *hedgeWorld) end(a *hedgeAgent, failed bool) {
	c := a.call
	a.call = nil
	if !failed {
		w.decide(func(b []byte) []byte {
			return append(appendStr(append(b, `{"kind":"settled","agent":`...), a.sessionID()), '}')
		})
		a.turns--
		a.at = w.now + int64(500+w.r.Intn(20_000))
		return
	}
	v, ok := w.decide(func(b []byte) []byte {
		b = appendStr(append(b, `{"kind":"request-error","agent":`...), a.sessionID())
		b = appendStr(append(b, `,"provider":`...), c.ch.Provider)
		return fmt.Appendf(b, `,"failure":{"code":"SERVER","status":500},"phase":"after-host","hostRetry":%s,"rand":%d}`, hostRetryJSON, w.r.Int63n(1<<53))
	})
	if ok {
		switch vd := v.Get("verdict"); vd.Get("kind").String() {
		case "retry", "wait":
			a.at = w.now + max(1, vd.Get("delayMs").Int())
			return
		}
	}
	a.turns-- // handed back: the turn ended
	a.at = w.now + int64(1000+w.r.Intn(20_000))
}

// The budget's window, as policy/budget.go slots it.
func (w *hedgeWorld) advance(p string) {
	if w.requests[p] == nil {
		w.requests[p], w.hedges[p] = &[budgetWindowSlots]int{}, &[budgetWindowSlots]int{}
		w.slot[p] = w.now / budgetSlotMs
	}
	slot := w.now / budgetSlotMs
	for i := w.slot[p] + 1; i <= slot && i <= w.slot[p]+budgetWindowSlots; i++ {
		w.requests[p][i%budgetWindowSlots], w.hedges[p][i%budgetWindowSlots] = 0, 0
	}
	w.slot[p] = max(w.slot[p], slot)
}

func (w *hedgeWorld) count(m map[string]*[budgetWindowSlots]int, p string) {
	w.advance(p)
	m[p][w.slot[p]%budgetWindowSlots]++
}

func sum(xs *[budgetWindowSlots]int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
