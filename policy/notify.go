package policy

// Webhook notifications (docs/telemetry.md#notifications): which of the
// module's own audited effects an operator is woken for, the channel each is
// about, and the rate limit over them. The shim only delivers (notify.js):
// the targets' event filter, signing, the POST and its tries.

// NotifyKind is a notification's event: a notify target chooses among them.
type NotifyKind string

const (
	NotifyProviderOpen NotifyKind = "provider-open" // a circuit-open record: a channel or a whole provider opened
	NotifyGiveUp       NotifyKind = "give-up"       // a give-up record
	NotifyQuotaWait    NotifyKind = "quota-wait"    // a quota-wait-entered record: a session starts a long-term wait
	NotifyReturned     NotifyKind = "returned"      // a return record: a session is back on the channel it failed over from
)

// NotifyKinds are the kinds a target may choose, in the order the docs list
// them (the web card's help takes them from here: policy-defaults.js).
var NotifyKinds = []NotifyKind{NotifyProviderOpen, NotifyGiveUp, NotifyQuotaWait, NotifyReturned}

// NotifyWindowMs: per kind and channel, at most one notification in this
// window. Every target that chooses a kind sees the same sequence of that
// kind's notices, so one window here answers for each target as its own did.
const NotifyWindowMs = 60_000

// notifyKeep is how many notices the window holds before it forgets those
// whose window has passed: its memory is bounded by the notices of a minute.
const notifyKeep = 1000

// Notice is the notification an effect means: its kind and the channel it
// is about (the rate limit's key). A waiting provider's channel is the
// provider, model "*".
type Notice struct {
	Kind    NotifyKind
	Channel Channel
}

// noticeOf is the table: the effects whose record means a notification.
func noticeOf(fx Effect) (Notice, bool) {
	switch e := fx.(type) {
	case CircuitChanged:
		return Notice{NotifyProviderOpen, e.Channel}, e.To == Open
	case GaveUp:
		return Notice{NotifyGiveUp, e.Channel}, true
	case QuotaWait:
		return Notice{NotifyQuotaWait, Channel{Provider: e.Provider, Model: providerModel}}, e.Phase == WaitEntered
	case Returned:
		return Notice{NotifyReturned, e.To}, true
	}
	return Notice{}, false
}

// Notify is the notification fx's audit record means at now, if one is due:
// not when another of its kind and channel went within NotifyWindowMs. The
// module's entry asks it once for each audited circuit, give-up, quota wait
// and return, in the step's order, as it writes the record; no other effect
// costs a thing.
//
// A kind no target chose is not due, and spends no window: nothing is sent.
func (s *State) Notify(now int64, fx Effect) (Notice, bool) {
	n, ok := noticeOf(fx)
	if !ok || len(s.NotifyTargets(n.Kind)) == 0 {
		return Notice{}, false
	}
	if last, seen := s.notified[n]; seen && now-last < NotifyWindowMs {
		return Notice{}, false
	}
	if s.notified == nil {
		s.notified = map[Notice]int64{}
	}
	s.notified[n] = now
	if len(s.notified) > notifyKeep {
		for k, at := range s.notified {
			if now-at >= NotifyWindowMs {
				delete(s.notified, k)
			}
		}
	}
	return n, true
}

// KeepNotified carries old's window into s: a new config resets the
// policy's state, not what an operator was already told this minute.
func (s *State) KeepNotified(old *State) { s.notified = old.notified }

// NotifyTargets are the places in the row's `notify` list of the targets
// that chose kind k: the shim sends a notice of that kind to these only.
func (s *State) NotifyTargets(k NotifyKind) []int {
	var out []int
	for i, t := range s.cfg.Notify {
		for _, e := range t.Events {
			if e == k {
				out = append(out, i)
				break
			}
		}
	}
	return out
}
