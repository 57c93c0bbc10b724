package codec

import "github.com/dsh-resilience/dsh-resilience/policy"

// The `notify` member of an audit entry (wit/policy.wit `notification`):
// the webhook notification the record means, when the policy says one is
// due (policy/notify.go). Its body holds the record's fields a receiver
// gets, written as the record writes them, in the order the body has them
// (docs/telemetry.md); the shim adds `type`, the time, the host name and the
// delivery id, and sends it.

// notice writes fx's notification into the audit entry w is in, when one is
// due at the step's time. Asked only for the four records that can mean one
// (build's auditLine.notice): no other record pays for it.
func (a *auditor) notice(w *writer, fx policy.Effect) {
	if a.state == nil {
		return // no step: a record written alone (the codec's tests)
	}
	n, ok := a.state.Notify(a.now, fx)
	if !ok {
		return
	}
	w.beginObject("notify")
	w.str("event", string(n.Kind))
	w.beginObject("body")
	switch e := fx.(type) {
	case policy.CircuitChanged:
		writeChannel(w, "channel", n.Channel)
		if e.Class != "" {
			w.str("class", string(e.Class))
		}
		w.str("cause", e.Cause)
		if e.OpenUntilMs != 0 {
			a.isoTime(w, "openUntil", e.OpenUntilMs)
		}
	case policy.GaveUp:
		writeChannel(w, "channel", n.Channel)
		w.str("code", e.Code)
		w.str("reason", string(e.Reason))
		w.str("session", e.Agent)
	case policy.QuotaWait:
		writeChannel(w, "channel", n.Channel) // the provider, model "*"
		if e.Reason != "" {
			w.str("reason", string(e.Reason))
		}
		if e.Pool != "" {
			w.str("pool", e.Pool)
		}
		a.isoTime(w, "nextAttemptAt", e.NextAttemptAtMs)
		w.str("session", e.Agent)
	case policy.Returned: // "provider/model" text, as the record has them
		w.channelText("channel", e.To)
		w.channelText("from", e.From)
		w.str("session", e.Agent)
	}
	w.endObject()
	w.endObject()
}
