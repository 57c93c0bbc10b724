package codec

import (
	"math"
	"strconv"
	"strings"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The keys of the hot inputs, for decoder.fields.
var (
	stepKeys         = []string{"nowMs", "event"}
	requestKeys      = []string{"kind", "agent", "proposed", "reasoningEffort", "contextTokens"}
	auxRequestKeys   = []string{"kind", "proposed", "purpose", "reasoningEffort"}
	requestErrorKeys = []string{"kind", "agent", "provider", "failure", "phase", "hostRetry", "rand"}
	failureKeys      = []string{"code", "message", "status", "providerRetryAfterMs"}
	hostRetryKeys    = []string{"mode", "maxRetries", "retryableCodes"}
	agentEventKeys   = []string{"kind", "agent"}
	probeResultKeys  = []string{"kind", "channel", "ok", "failure"}
)

// decodeStepInput reads the WIT record `step-input`. hr, when not nil,
// keeps the last host retry policy decoded (hostRetryCache).
func decodeStepInput(v gjson.Result, hr *hostRetryCache) (int64, policy.Event, error) {
	d := decoder{prefix: "input", hostRetries: hr}
	root, _ := d.fields(v, "", stepKeys)
	now, _ := d.uint(root.get("nowMs"), "nowMs", true, maxMs)
	e := root.get("event")
	var ev policy.Event
	if d.err == nil && present(e) && e.IsObject() {
		switch kind := d.str(e.Get("kind"), "event.kind", true); kind {
		case "request":
			f, _ := d.fields(e, "event", requestKeys)
			tokens, _ := d.uint(f.get("contextTokens"), "event.contextTokens", false, maxMs)
			ev = policy.Request{
				Agent:           d.str(f.get("agent"), "event.agent", true),
				Proposed:        d.channel(f.get("proposed"), "event.proposed"),
				ReasoningEffort: d.str(f.get("reasoningEffort"), "event.reasoningEffort", false),
				ContextTokens:   int64(tokens),
			}
		case "aux-request":
			f, _ := d.fields(e, "event", auxRequestKeys)
			ev = policy.AuxRequest{
				Proposed:        d.channel(f.get("proposed"), "event.proposed"),
				Purpose:         d.str(f.get("purpose"), "event.purpose", true),
				ReasoningEffort: d.str(f.get("reasoningEffort"), "event.reasoningEffort", false),
			}
		case "request-error":
			f, _ := d.fields(e, "event", requestErrorKeys)
			r, _ := d.uint(f.get("rand"), "event.rand", true, maxMs-1)
			ev = policy.RequestError{
				Agent:     d.str(f.get("agent"), "event.agent", true),
				Provider:  d.str(f.get("provider"), "event.provider", true),
				Failure:   d.failure(f.get("failure"), "event.failure"),
				Phase:     policy.Phase(d.oneOf(f.get("phase"), "event.phase", true, string(policy.BeforeHost), string(policy.AfterHost))),
				HostRetry: d.hostRetry(f.get("hostRetry"), "event.hostRetry"),
				Rand:      r,
			}
		case "wake":
			d.object(e, "event", "kind")
			ev = policy.Wake{}
		case "probe-result":
			f, _ := d.fields(e, "event", probeResultKeys)
			r := policy.ProbeResult{Channel: d.channel(f.get("channel"), "event.channel"), OK: d.boolean(f.get("ok"), "event.ok")}
			if !r.OK {
				r.Failure = d.failure(f.get("failure"), "event.failure")
			}
			ev = r
		case "model-info":
			d.object(e, "event", "kind", "channel", "known", "efforts", "code", "contextWindow")
			window, _ := d.uint(e.Get("contextWindow"), "event.contextWindow", false, maxMs)
			mi := policy.ModelInfo{Channel: d.channel(e.Get("channel"), "event.channel"), Known: d.boolean(e.Get("known"), "event.known"),
				Code: d.str(e.Get("code"), "event.code", false), ContextWindow: int64(window)}
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
		case "hedge-result":
			ev = d.hedgeResult(e)
		case "tool-result":
			ev = d.toolResult(e)
		case "restore-route":
			ev = d.restoreRoute(e)
		case "set-quota", "set-pool", "balance-reading":
			ev = d.quotaEvent(kind, e)
		case "settled", "disposed":
			f, _ := d.fields(e, "event", agentEventKeys)
			agent := d.str(f.get("agent"), "event.agent", true)
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
	f, ok := d.fields(v, path, failureKeys)
	if !ok {
		return policy.Failure{}
	}
	status, _ := d.uintAt(f.get("status"), path, "status", false, math.MaxUint32)
	ra, _ := d.uintAt(f.get("providerRetryAfterMs"), path, "providerRetryAfterMs", false, maxMs)
	return policy.Failure{
		Code:         d.strAt(f.get("code"), path, "code", true),
		Message:      d.strAt(f.get("message"), path, "message", false),
		Status:       int(status),
		RetryAfterMs: int64(ra),
	}
}

// hostRetryCache is the last host retry policy a module decoded, by its
// text. The host sends the same policy with every failure: decoded again, it
// cost a parse, the policy and its code list per failure.
type hostRetryCache struct {
	raw string
	h   *policy.HostRetryPolicy
}

func (d *decoder) hostRetry(v gjson.Result, path string) *policy.HostRetryPolicy {
	if !present(v) {
		return nil
	}
	if c := d.hostRetries; c != nil && c.h != nil && v.Raw == c.raw {
		return c.h // the same text decodes the same, errors included (none: it was kept)
	}
	h := d.decodeHostRetry(v, path)
	if c := d.hostRetries; c != nil && h != nil && d.err == nil {
		c.raw, c.h = strings.Clone(v.Raw), h
	}
	return h
}

func (d *decoder) decodeHostRetry(v gjson.Result, path string) *policy.HostRetryPolicy {
	f, ok := d.fields(v, path, hostRetryKeys)
	if !ok {
		return nil
	}
	h := &policy.HostRetryPolicy{Mode: d.strAt(f.get("mode"), path, "mode", true)}
	n, _ := d.uintAt(f.get("maxRetries"), path, "maxRetries", false, math.MaxInt32)
	h.MaxRetries = int(n)
	codes := f.get("retryableCodes")
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
