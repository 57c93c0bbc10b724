package codec

import (
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The row's `notify` list (wit/policy.wit `notify-target`), read and
// echoed; its checks are the policy's (policy/notifytarget.go).

var notifyTargetKeys = []string{"url", "events", "secretEnv", "timeoutMs"}

// notify reads the row's `notify` list.
func (d *decoder) notify(v gjson.Result) []policy.NotifyTarget {
	var out []policy.NotifyTarget
	for i, t := range d.array(v, "notify", false) {
		at := "notify[" + strconv.Itoa(i) + "]"
		if !d.object(t, at, notifyTargetKeys...) {
			return out
		}
		nt := policy.NotifyTarget{URL: d.str(t.Get("url"), at+".url", true), SecretEnv: d.str(t.Get("secretEnv"), at+".secretEnv", false),
			TimeoutMs: policy.DefaultNotifyTimeoutMs}
		for j, e := range d.array(t.Get("events"), at+".events", true) {
			nt.Events = append(nt.Events, policy.NotifyKind(d.str(e, at+".events["+strconv.Itoa(j)+"]", true)))
		}
		if n, ok := d.uint(t.Get("timeoutMs"), at+".timeoutMs", false, maxMs); ok {
			nt.TimeoutMs = int64(n)
		}
		out = append(out, nt)
	}
	return out
}

// writeNotifyConfig echoes the list, each target's timeout spelled out.
func writeNotifyConfig(w *writer, targets []policy.NotifyTarget) {
	w.beginArray("notify")
	for _, t := range targets {
		w.beginObject("")
		w.str("url", t.URL)
		events := make([]string, len(t.Events))
		for i, e := range t.Events {
			events[i] = string(e)
		}
		w.strings("events", events)
		if t.SecretEnv != "" {
			w.str("secretEnv", t.SecretEnv)
		}
		w.int("timeoutMs", t.TimeoutMs)
		w.endObject()
	}
	w.endArray()
}

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
	w.beginArray("targets")
	for _, i := range a.state.NotifyTargets(n.Kind) {
		w.b = appendInt(w.sep(w.b), int64(i))
	}
	w.endArray()
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
