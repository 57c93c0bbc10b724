package codec

import (
	"math"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// decodeStepInput reads the WIT record `step-input`.
func decodeStepInput(v gjson.Result) (int64, policy.Event, error) {
	d := decoder{prefix: "input"}
	d.object(v, "", "nowMs", "event")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	e := v.Get("event")
	var ev policy.Event
	if d.err == nil && present(e) && e.IsObject() {
		switch kind := d.str(e.Get("kind"), "event.kind", true); kind {
		case "request":
			d.object(e, "event", "kind", "agent", "proposed", "reasoningEffort")
			ev = policy.Request{
				Agent:           d.str(e.Get("agent"), "event.agent", true),
				Proposed:        d.channel(e.Get("proposed"), "event.proposed"),
				ReasoningEffort: d.str(e.Get("reasoningEffort"), "event.reasoningEffort", false),
			}
		case "request-error":
			d.object(e, "event", "kind", "agent", "provider", "failure", "phase", "hostRetry", "rand")
			r, _ := d.uint(e.Get("rand"), "event.rand", true, maxMs-1)
			ev = policy.RequestError{
				Agent:     d.str(e.Get("agent"), "event.agent", true),
				Provider:  d.str(e.Get("provider"), "event.provider", true),
				Failure:   d.failure(e.Get("failure"), "event.failure"),
				Phase:     policy.Phase(d.oneOf(e.Get("phase"), "event.phase", true, string(policy.BeforeHost), string(policy.AfterHost))),
				HostRetry: d.hostRetry(e.Get("hostRetry"), "event.hostRetry"),
				Rand:      r,
			}
		case "wake":
			d.object(e, "event", "kind")
			ev = policy.Wake{}
		case "probe-result":
			d.object(e, "event", "kind", "channel", "ok", "failure")
			r := policy.ProbeResult{Channel: d.channel(e.Get("channel"), "event.channel"), OK: d.boolean(e.Get("ok"), "event.ok")}
			if !r.OK {
				r.Failure = d.failure(e.Get("failure"), "event.failure")
			}
			ev = r
		case "model-info":
			d.object(e, "event", "kind", "channel", "known", "efforts", "code")
			mi := policy.ModelInfo{Channel: d.channel(e.Get("channel"), "event.channel"), Known: d.boolean(e.Get("known"), "event.known"),
				Code: d.str(e.Get("code"), "event.code", false)}
			for i, x := range d.array(e.Get("efforts"), "event.efforts", true) {
				mi.Efforts = append(mi.Efforts, d.str(x, "event.efforts["+strconv.Itoa(i)+"]", true))
			}
			ev = mi
		case "set-backup":
			d.object(e, "event", "kind", "channel")
			var ch policy.Channel
			if present(e.Get("channel")) {
				// Named like a chain entry, and refused the same way: a blank
				// provider or model is no channel (a missing one clears the backup).
				ch = d.channel(e.Get("channel"), "event.channel")
				d.named(ch, "event.channel")
			}
			ev = policy.SetBackup{Channel: ch}
		case "stream-check":
			ev = d.streamCheck(e)
		case "tool-result":
			ev = d.toolResult(e)
		case "set-quota", "set-pool", "balance-reading", "restore-mark":
			ev = d.quotaEvent(kind, e)
		case "settled", "disposed":
			d.object(e, "event", "kind", "agent")
			agent := d.str(e.Get("agent"), "event.agent", true)
			if kind == "settled" {
				ev = policy.Settled{Agent: agent}
			} else {
				ev = policy.Disposed{Agent: agent}
			}
		default:
			d.fail("event.kind", "unknown event kind %q", kind)
		}
	} else if d.err == nil {
		d.fail("event", "must be an object")
	}
	return int64(now), ev, d.err
}

func (d *decoder) failure(v gjson.Result, path string) policy.Failure {
	if !d.object(v, path, "code", "message", "status", "providerRetryAfterMs") {
		return policy.Failure{}
	}
	status, _ := d.uintAt(v.Get("status"), path, "status", false, math.MaxUint32)
	ra, _ := d.uintAt(v.Get("providerRetryAfterMs"), path, "providerRetryAfterMs", false, maxMs)
	return policy.Failure{
		Code:         d.strAt(v.Get("code"), path, "code", true),
		Message:      d.strAt(v.Get("message"), path, "message", false),
		Status:       int(status),
		RetryAfterMs: int64(ra),
	}
}

func (d *decoder) hostRetry(v gjson.Result, path string) *policy.HostRetryPolicy {
	if !present(v) || !d.object(v, path, "mode", "maxRetries", "retryableCodes") {
		return nil
	}
	h := &policy.HostRetryPolicy{Mode: d.strAt(v.Get("mode"), path, "mode", true)}
	n, _ := d.uintAt(v.Get("maxRetries"), path, "maxRetries", false, math.MaxInt32)
	h.MaxRetries = int(n)
	codes := v.Get("retryableCodes")
	if !codes.IsArray() {
		d.array(codes, path+".retryableCodes", true) // names what is wrong
		return h
	}
	codes.ForEach(func(k, c gjson.Result) bool {
		if c.Type != gjson.String {
			d.str(c, path+".retryableCodes["+strconv.Itoa(len(h.RetryableCodes))+"]", true)
			return false
		}
		h.RetryableCodes = append(h.RetryableCodes, c.Str)
		return true
	})
	return h
}
