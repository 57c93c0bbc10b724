package sim

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// The session view (policy/view.go, the web chip): where a session runs and
// where a failure would send it. Two invariants, at every restart:
//
//   - view-next-not-current: the next target is never the channel the
//     session is on (the chip once said "Backup: X" of the X it ran on);
//   - view-survives-restart: a restarted module, told what the shim keeps
//     (the session's saved home and pick) and what the host proposes (the
//     route its log last used), says what the running one said.
//
// Only idle web sessions outside pools with no measured context are
// compared, and only while no probe holds a half-open slot: a request's
// context and a turn in flight reach a restarted module with its first
// request, and a probe in flight is rightly forgotten. A pooled session's
// saved pool is told to the view (policy/view.go sketch), but its running
// pool route is not kept across a restart: compared too, 5 of 30 eight-hour
// seeds named another next target or another reason after the restart
// (a route moved by exhaustion, a home the shell did not save). A give-up
// is not compared: it belongs to the turn it ended, which ended with its
// process, and the chip shows it only until the session's next request.

// viewQuery is the view's input for agent a at now.
func viewQuery(now int64, a *simAgent) []byte {
	b := append([]byte(`{"nowMs":`), strconv.AppendInt(nil, now, 10)...)
	b = append(b, `,"agent":`...)
	b = appendStr(b, a.id)
	for _, f := range []struct {
		k  string
		ch Channel
	}{{"proposed", a.header}, {"home", a.savedHome}, {"pick", a.savedPick}} {
		if f.ch != (Channel{}) {
			b = append(b, `,"`+f.k+`":`...)
			b = appendChannel(b, f.ch)
		}
	}
	return append(b, '}')
}

// compareViews holds the running module's view of each comparable session
// against the restarted one's.
func (r *runner) compareViews(old, restored *Module) {
	for _, b := range r.track {
		if b.state == "half-open" && b.holder != "" {
			return // a restart rightly forgets a probe in flight (compareRouting)
		}
	}
	for _, a := range r.agents {
		if !a.web || a.busy || a.touchedPool || a.ctx > 0 || a.header == (Channel{}) {
			continue
		}
		var got [2]string
		for i, m := range []*Module{old, restored} {
			out, err := m.call("view", viewQuery(r.now, a))
			if err != nil {
				r.brk("export-error", "view: %v", err)
				return
			}
			v := gjson.ParseBytes(out)
			got[i] = v.Get(`{current,home,next,avoided}`).Raw
			if next := v.Get("next.channel"); next.Exists() && next.Raw == v.Get("current").Raw {
				r.brk("view-next-not-current", "agent %s: the view names where it is as its next target: %s", a.id, out)
				return
			}
		}
		if got[0] != got[1] {
			r.brk("view-survives-restart", "agent %s: before the restart %s, after it %s (current, home, next, avoided)", a.id, got[0], got[1])
			return
		}
	}
}
