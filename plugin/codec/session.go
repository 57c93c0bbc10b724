package codec

import (
	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// restoreRoute reads `restore-route`: a session's persisted home and pick,
// each optional, each a whole channel when given.
func (d *decoder) restoreRoute(e gjson.Result) policy.Event {
	d.object(e, "event", "kind", "agent", "home", "pick")
	ev := policy.RestoreRoute{Agent: d.str(e.Get("agent"), "event.agent", true)}
	if v := e.Get("home"); present(v) {
		ev.Home = d.channel(v, "event.home")
		d.named(ev.Home, "event.home")
	}
	if v := e.Get("pick"); present(v) {
		ev.Pick = d.channel(v, "event.pick")
		d.named(ev.Pick, "event.pick")
	}
	return ev
}

// writeSessionRoute writes `session-route`: the home and pick to persist.
func writeSessionRoute(w *writer, e policy.SessionRoute) {
	w.str("kind", "session-route")
	w.str("agent", e.Agent)
	if !e.Home.IsZero() {
		writeChannel(w, "home", e.Home)
	}
	if !e.Pick.IsZero() {
		writeChannel(w, "pick", e.Pick)
	}
}
