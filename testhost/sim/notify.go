package sim

import (
	"strconv"

	"github.com/tidwall/gjson"
)

// notify-window: the webhook notifications the module puts on its audit
// entries (policy/notify.go). An operator is told of every channel that
// opens, once a minute at most: no two notifications of one kind about one
// channel within notifyWindowMs, and no breaker opens without one, unless
// one about it went within the window. The window is the instance's, so a
// restart (a new instance) starts it afresh, as a new process does. Each
// notification names the receivers that chose its kind, and only those.

// notifyWindowMs mirrors policy.NotifyWindowMs.
const notifyWindowMs = 60_000

// receivers maps each kind to the places of the `notify` receivers that
// chose it, as the module writes them ([0,1]); a kind none chose is absent.
func receivers(list gjson.Result) map[string]string {
	out := map[string]string{}
	for i, t := range list.Array() {
		for _, e := range t.Get("events").Array() {
			if out[e.Str] == "" {
				out[e.Str] = "["
			} else {
				out[e.Str] += ","
			}
			out[e.Str] += strconv.Itoa(i)
		}
	}
	for k := range out {
		out[k] += "]"
	}
	return out
}

// notice is a notification's kind and the channel it is about.
type notice struct {
	event string
	ch    Channel
}

// checkNotices holds a step's notifications to the window.
func (r *runner) checkNotices(out Output) {
	for _, fx := range out.Effects {
		if fx.NotifyEvent != "" {
			if want := r.cfg.notify[fx.NotifyEvent]; fx.NotifyTargets != want {
				r.brk("notify-window", "a %s notification names receivers %s, not %q", fx.NotifyEvent, fx.NotifyTargets, want)
			}
			n := notice{fx.NotifyEvent, fx.NotifyCh}
			if at, ok := r.notified[n]; ok && r.now-at < notifyWindowMs {
				r.brk("notify-window", "%s about %s notified again %d ms after the last", n.event, n.ch, r.now-at)
			}
			r.notified[n] = r.now
			r.res.Notices++
		}
		if fx.Kind == "circuit" && fx.To == "open" && r.cfg.notify["provider-open"] != "" {
			if at, ok := r.notified[notice{"provider-open", fx.Channel}]; !ok || r.now-at >= notifyWindowMs {
				r.brk("notify-window", "%s opened (%s->open) with no notification in the last minute", fx.Channel, fx.From)
			}
		}
	}
}
