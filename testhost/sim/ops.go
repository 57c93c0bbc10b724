package sim

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

func (r *runner) doOp(op *Op) {
	switch op.Kind {
	case OpOutage:
		r.active = append(r.active, r.opIdx)
	case OpTurn:
		r.startTurn(op)
	case OpCancel:
		if a := r.agents[op.Agent]; a != nil {
			r.cancel(a)
		}
	case OpDispose:
		if a := r.agents[op.Agent]; a != nil {
			r.dispose(a)
		}
	case OpTool:
		r.tool(op)
	case OpRestart:
		r.restart(true)
	case OpRebuild:
		r.restart(false)
	case OpBackup:
		if op.Ch < 0 {
			r.backup = nil
		} else {
			c := r.s.Channels[op.Ch]
			r.backup = &c
		}
		r.picture++ // held agents may use the backup
		r.decide("set-backup", Channel{}, nil, r.backupEvent)
	case OpStream:
		r.stream(op)
	case OpPick:
		r.pick(op)
	case OpReading:
		r.reading(op)
	case OpQuotaSwitch:
		r.quotaSwitch(op)
	case OpModelInfo:
		ch := r.s.Channels[op.Ch]
		efforts := []string{`[]`, `["high"]`, `["low","high"]`}[op.N%3]
		r.decide("model-info", Channel{}, nil, func(b []byte) []byte {
			b = append(b, `{"kind":"model-info","channel":`...)
			b = appendChannel(b, ch)
			if w := r.fit.declared[ch]; w > 0 {
				b = fmt.Appendf(b, `,"contextWindow":%d`, w) // the host declares the same window each time
			}
			return fmt.Appendf(b, `,"known":true,"efforts":%s}`, efforts)
		})
	}
}

// backupEvent is set-backup with the user's current choice.
func (r *runner) backupEvent(b []byte) []byte {
	b = append(b, `{"kind":"set-backup"`...)
	if r.backup != nil {
		b = append(b, `,"channel":`...)
		b = appendChannel(b, *r.backup)
	}
	return append(b, '}')
}

// allowed mirrors the tools.retry allow-list the schedules configure:
// literal names, or prefixes ending in one '*'.
func allowed(tool string) bool {
	for _, p := range allowList {
		if p == tool || strings.HasSuffix(p, "*") && strings.HasPrefix(tool, p[:len(p)-1]) {
			return true
		}
	}
	return false
}

// tool plays one tool call: it fails op.Dur times, then succeeds, and every
// repeat the module asks for is checked against the allow-list and maxAttempts.
func (r *runner) tool(op *Op) {
	name := toolPool[op.N]
	code, msg := toolFailure(op.Mode)
	for attempt := int64(1); ; attempt++ {
		failed := attempt <= op.Dur
		if failed {
			r.res.Failures++
		}
		out, ok := r.decide("tool-result", Channel{}, nil, func(b []byte) []byte {
			b = append(b, `{"kind":"tool-result","agent":`...)
			b = appendStr(b, op.Agent)
			b = fmt.Appendf(b, `,"call":"call-%d","tool":`, op.ID)
			b = appendStr(b, name)
			b = fmt.Appendf(b, `,"attempt":%d`, attempt)
			if failed {
				b = append(b, `,"failure":{`...)
				if code != "" {
					b = append(b, `"code":`...)
					b = appendStr(b, code)
					b = append(b, ',')
				}
				b = append(b, `"message":`...)
				b = appendStr(b, msg)
				b = append(b, '}')
			}
			return fmt.Appendf(b, `,"rand":%d}`, draw(op.Agent, int64(op.ID)*13+attempt)>>11)
		})
		if !ok {
			return
		}
		switch out.Kind {
		case "tool-retry":
			if !failed {
				r.brk("tool-allow-list", "%q repeated after a success", name)
			}
			if !allowed(name) {
				r.brk("tool-allow-list", "%q is off the allow-list, yet attempt %d was asked for", name, out.ToolAttempt)
			}
			if out.ToolAttempt != attempt+1 || out.ToolAttempt > int64(r.cfg.maxAttempts) {
				r.brk("tool-max-attempts", "%q: attempt %d asked for after attempt %d (maxAttempts %d)", name, out.ToolAttempt, attempt, r.cfg.maxAttempts)
			}
			if len(r.res.Breaks) > 0 {
				return
			}
		case "tool-return":
			if out.ToolOutcome == "retry" || out.ToolAttempts != attempt {
				r.brk("verdict-legal", "tool-return %q after %d attempts, attempt %d", out.ToolOutcome, out.ToolAttempts, attempt)
			}
			return
		default:
			r.brk("verdict-legal", "tool-result answered %q", out.Kind)
			return
		}
	}
}

// stream asks whether a streaming call is stalled: its answer must be one of the stream verdicts.
func (r *runner) stream(op *Op) {
	ch := r.s.Channels[op.Ch]
	out, ok := r.decide("stream-check", Channel{}, nil, func(b []byte) []byte {
		b = append(b, `{"kind":"stream-check","channel":`...)
		b = appendChannel(b, ch)
		if op.ID%3 == 0 {
			b = append(b, `,"purpose":"compaction"`...)
		}
		b = fmt.Appendf(b, `,"openedMs":%d,"chunks":%d`, r.now-op.Dur, op.N)
		if op.N > 0 {
			b = fmt.Appendf(b, `,"lastChunkMs":%d`, r.now-op.Dur/2)
		}
		return append(b, `,"cancelled":false}`...)
	})
	if ok && out.Kind != "watch" && out.Kind != "cut" && out.Kind != "pass" {
		r.brk("verdict-legal", "stream-check answered %q", out.Kind)
	}
}

// restart replaces the module as the shim does: a host restart (killing
// every turn in flight) or a rebuild after a trap (the host carries on).
// The channel health goes over through snapshot and restore, the backup
// through set-backup. Before the switch, the old instance and a second
// restored one must route a fresh agent the same way from every channel.
func (r *runner) restart(host bool) {
	snap, err := r.m.call("snapshot", []byte("{}"))
	if err != nil {
		r.brk("export-error", "snapshot: %v", err)
		return
	}
	providers := map[string]bool{}
	for _, c := range r.s.Channels {
		providers[c.Provider] = true
	}
	if n := len(gjson.GetBytes(snap, "channels").Array()); n > len(r.s.Channels)+len(providers) {
		r.brk("state-bounded", "snapshot holds %d breakers; the world has %d channels of %d providers", n, len(r.s.Channels), len(providers))
	}
	// A new host process reads health.json, which holds what the module
	// kept of its records (persist: no forgotten one, no slow or shared
	// list); a rebuild in the same process takes the snapshot.
	file := snap
	if host {
		if file, err = r.m.fileAt(r.now); err != nil {
			r.brk("export-error", "persist: %v", err)
			return
		}
		r.res.Forgotten += int64(len(gjson.GetBytes(snap, "channels").Array()) - len(gjson.GetBytes(file, "channels").Array()))
	}
	// fresh configures a module and restores the file into it; the live
	// one then gets the backup through decide (its effects carried out, as
	// the shim does at boot), the throwaway check module directly.
	fresh := func(readings bool) *Module {
		m, err := newModule(r.rt, r.s.Config)
		if err != nil {
			r.brk("export-error", "configure: %v", err)
			return nil
		}
		if _, err := m.call("restore", m.restoreInput(file, r.now)); err != nil {
			r.brk("export-error", "restore: %v (file %s)", err, clip(string(file)))
			m.close()
			return nil
		}
		if readings {
			r.readingEvents(m) // the shim's first balance run at boot
		}
		return m
	}
	check := fresh(true)
	if check == nil {
		return
	}
	r.res.Events++
	if _, in, err := check.decide(r.now, r.backupEvent); err != nil {
		r.brk("export-error", "set-backup: %v (input %s)", err, clip(string(in)))
		check.close()
		return
	}
	// The restored instance has the boot's balance readings (readingEvents);
	// the old one, about to be replaced, gets the same, so the two are
	// compared on the same knowledge (a boot reading makes a stale one
	// fresh again: seed 15).
	r.readingEvents(r.m)
	r.compareRouting(r.m, check)
	r.compareViews(r.m, check)
	check.close()
	if host && gjson.GetBytes(snap, "coldPass").Bool() {
		r.checkColdPass(snap, fresh)
	}
	if host {
		r.checkFirstRunWord()
	}
	next := fresh(false)
	if next == nil {
		return
	}
	r.m.close()
	r.m = next
	clear(r.budgets)
	clear(r.notified) // the window is the instance's
	r.resync(snap)
	r.restoredAt = r.now
	// The live instance's boot readings come after the picture is rebuilt
	// from the snapshot, their effects carried out and checked like any
	// step's: a reading showing allowance a refresh interval after an
	// exhaustion mark closes the provider (balance-restored), and a picture
	// rebuilt after that close, from the snapshot taken before it, kept the
	// provider open (seed 1: the next mark's true closed->open was taken
	// for an unreported transition).
	r.readingEvents(nil)
	r.decide("set-backup", Channel{}, nil, r.backupEvent)
	r.tellWindows() // the shim describes every target to a new instance
	if host {
		// A new host process: its probes and wake timer are gone; at boot the
		// shim sends a wake at once. (A rebuild keeps the shim's timer.)
		r.probeGen++
		r.wakeGen++
		r.decide("wake", Channel{}, nil, func(b []byte) []byte { return append(b, `{"kind":"wake"}`...) })
	}
	for _, a := range r.agents {
		a.homeBefore, a.restartPending, a.needRestore = a.savedHome, true, true
		a.pickTold = a.pickTold && a.savedPick == a.pick
		a.forget()
		if host {
			a.gen++
			a.busy, a.inFlight, a.waiting = false, false, false
		} else {
			// A rebuild in the same process: the shim's bring-up tells the
			// new instance every tracked session's home and pick at once
			// (engine.js bringUp, quota.js sessionEvents), before a turn in
			// flight fails or asks again. Told only at the next request, a
			// failure of a request in flight reached an instance that met
			// the session as new (sim seeds 69 and 91 at 24 h, 120 agents).
			r.restoreRoute(a)
		}
	}
}

// checkColdPass: the snapshot said the next process may send a new
// session's first request as proposed before its module is up
// (policy/coldpass.go). A module brought up from it (configured, restored,
// told the backup: what the shim's bring-up tells before any session's
// settings) must then pass a fresh agent's request from every channel, and
// from one the config never names.
func (r *runner) checkColdPass(snap []byte, fresh func(readings bool) *Module) {
	m := fresh(false)
	if m == nil {
		return
	}
	defer m.close()
	if _, in, err := m.decide(r.now, r.backupEvent); err != nil {
		r.brk("export-error", "set-backup: %v (input %s)", err, clip(string(in)))
		return
	}
	r.passesCold(m, "cold-pass-sound", "the snapshot "+clip(string(snap))+" allowed a cold pass")
}

// checkFirstRunWord: a first run has no snapshot to carry a word; the shim
// takes the module's from the row (policy.RuleKeys, host-shim/cold-start.js):
// without those keys, a home with no health records sends a new session's
// first request cold. A module only configured, as a first run's comes up
// (no health, no backup), must then pass it from every channel and from one
// the config never names, whatever the world did since.
func (r *runner) checkFirstRunWord() {
	for _, k := range policy.RuleKeys {
		if v := gjson.Get(r.s.Config, k); v.Exists() && v.Type != gjson.Null {
			return
		}
	}
	m, err := newModule(r.rt, r.s.Config)
	if err != nil {
		r.brk("export-error", "configure: %v", err)
		return
	}
	defer m.close()
	r.passesCold(m, "first-run-word-sound", "the row has none of the rule keys")
}

// passesCold asks m where a fresh agent proposing each channel goes, and
// breaks the invariant, saying why a pass was due, unless it is passed as proposed.
func (r *runner) passesCold(m *Module, invariant, why string) {
	for i, ch := range append(slices.Clone(r.s.Channels), Channel{"cold-check", "unnamed"}) {
		agent := fmt.Sprintf("\x00cold-check-%d", i)
		out, in, err := m.decide(r.now, bareRequest(agent, ch))
		if err != nil {
			r.brk("export-error", "request: %v (input %s)", err, clip(string(in)))
			return
		}
		if out.Kind != "pass" {
			r.brk(invariant, "%s, yet a fresh module answered %s %s to a first request proposing %s", why, out.Kind, out.Swap, ch)
			return
		}
	}
}

// compareRouting asks both modules where a fresh agent proposing each
// channel would go. Channels whose half-open slot is held are left out: a
// restart rightly forgets a probe in flight.
func (r *runner) compareRouting(old, restored *Module) {
	for _, b := range r.track {
		if b.state == "half-open" && b.holder != "" {
			return
		}
	}
	const probe = "\x00restart-check"
	for _, ch := range r.s.Channels {
		var got [2]Output
		for i, m := range []*Module{old, restored} {
			out, in, err := m.decide(r.now, bareRequest(probe, ch))
			if err != nil {
				r.brk("export-error", "request: %v (input %s)", err, clip(string(in)))
				return
			}
			got[i] = out
			if _, _, err := m.decide(r.now, func(b []byte) []byte {
				return append(appendStr(append(b, `{"kind":"disposed","agent":`...), probe), '}')
			}); err != nil {
				r.brk("export-error", "disposed: %v", err)
				return
			}
		}
		if got[0].Kind != got[1].Kind || got[0].Swap != got[1].Swap {
			r.brk("restore-same-decisions", "from %s: before the restart %s %s, after it %s %s", ch, got[0].Kind, got[0].Swap, got[1].Kind, got[1].Swap)
			return
		}
	}
}

// resync rebuilds the breaker picture from a snapshot: restored breakers as
// recorded (a channel's half-open comes back open and due; a provider's
// stays half-open: it holds no probe), provider breakers (model "*")
// included. A provider without a record the module derives silently, as
// its live check does: open until the longest of its models that are down
// now (open, their time not up) when enough of them are. A model whose open
// time has passed lets requests through and does not count, even while it
// is still marked open (seed 31: counting it derived a provider open that
// the module rightly left closed).
func (r *runner) resync(snap []byte) {
	r.picture++
	clear(r.track)
	down, until := map[string]int{}, map[string]int64{}
	gjson.GetBytes(snap, "channels").ForEach(func(_, h gjson.Result) bool {
		ch := channelOf(h.Get("channel"))
		st := h.Get("state").String()
		if st == "half-open" && ch.Model != "*" {
			st = "open"
		}
		b := &breaker{state: st, openUntil: h.Get("openUntilMs").Int()}
		r.track[ch] = b
		if st == "open" && b.openUntil > r.now && ch.Model != "*" {
			down[ch.Provider]++
			until[ch.Provider] = max(until[ch.Provider], b.openUntil)
		}
		return true
	})
	for p, n := range down {
		if r.track[Channel{p, "*"}] != nil {
			continue // recorded: taken as it is
		}
		if r.cfg.providerThreshold > 0 && n >= r.cfg.providerThreshold {
			r.track[Channel{p, "*"}] = &breaker{state: "open", openUntil: until[p]}
		}
	}
}
