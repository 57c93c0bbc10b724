package migrate

import (
	"errors"
	"slices"
	"strings"
)

// dsh-model-failover: model and platform circuits, a fallback list.
var modelFailover = plugin{
	name: "dsh-model-failover",
	ids:  []string{"model-failover", "dsh-model-failover"},
	keys: map[string]keyMap{
		"enabled": func(v, _ Value) ([]out, error) {
			if _, err := boolean(v); err != nil {
				return nil, err
			}
			switch {
			case v.IsExpr():
				return exprSwitch("enabled"), nil
			case !isTrue(v):
				return to(Path{"enabled"}, Boolean(false), "the master switch: off observes nothing and changes nothing"), nil
			}
			return none("the default: the plugin acts while its row is enabled"), nil
		},
		"fallbacks": func(v, _ Value) ([]out, error) {
			chain, err := channels(v)
			return to(Path{"chain"}, chain, "the session's own model is still tried first, then the chain in this order"), err
		},
		"tripCodes": func(v, _ Value) ([]out, error) { return tripCodes(v) },
		"modelCircuitThreshold": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"failureThreshold"}, n,
				"counts every failure on the channel within burstWindowMs, the host's retries included (model-failover counted those llm-retry gave up on)"), err
		},
		"burstWindowMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"burstWindowMs"}, n, "same meaning"), err
		},
		"modelCooldownMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"cooldownMs"}, n, "doubles while the outage lasts, up to maxCooldownMs; Retry-After extends it"), err
		},
		"platformCircuitThreshold": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"providerThreshold"}, n, "distinct open models that open their provider"), err
		},
		"platformCooldownMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"providerCooldownMs"}, n, "how long an opened provider stays open (0: as long as its longest open model)"), err
		},
		"enableProbe": func(v, _ Value) ([]out, error) {
			b, err := boolean(v)
			return to(Path{"probes"}, b, "an opened channel gets one tiny real request when its open time is up"), err
		},
		"probeMaxTokens": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"probeMaxTokens"}, n, "output tokens a probe asks for (1-4096)"), err
		},
		"stripReasoningEffort": func(v, config Value) ([]out, error) {
			if _, err := boolean(v); err != nil {
				return nil, err
			}
			if v.IsExpr() {
				return exprSwitch("stripReasoningEffort"), nil
			}
			if fallbacks, ok := config.Get("fallbacks"); isTrue(v) && ok && fallbacks.Kind == Array && len(fallbacks.Arr) > 0 {
				chain, err := channels(fallbacks)
				return to(Path{"stripReasoningEffort"}, chain, "every fallback: a failover to it never sends a reasoning effort"), err
			}
			return none("the default: a failover keeps the reasoning effort where the target lists it and drops it where not"), nil
		},
		"notifyUser": func(v, _ Value) ([]out, error) {
			b, err := boolean(v)
			return to(Path{"notice"}, b, "the notice at each switch: a headless run's line on stderr (the web client shows every switch as a row whatever it says, and each is an audit line)"), err
		},
	},
}

// tripCodes are dsh-model-failover's default trip codes: what a circuit
// counted unless its row said otherwise.
var tripCodeDefaults = []string{"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "QUOTA", "EMPTY_RESPONSE"}

// tripCodes: a code added to the list counts here as transient, a code
// dropped from it is handed back uncounted (permanent).
func tripCodes(v Value) ([]out, error) {
	if v.Kind != Array {
		return nil, errors.New("must be a list of codes")
	}
	var codes []string
	for _, c := range v.Arr {
		if c.Kind != String || jsTrim(c.Str) == "" {
			return nil, errors.New("must be a list of codes")
		}
		if code := strings.ToUpper(jsTrim(c.Str)); !slices.Contains(codes, code) {
			codes = append(codes, code)
		}
	}
	var classes []Value
	for _, c := range codes {
		if !slices.Contains(tripCodeDefaults, c) {
			classes = append(classes, Obj(M("code", Str(c)), M("class", Str("transient"))))
		}
	}
	for _, c := range tripCodeDefaults {
		if !slices.Contains(codes, c) {
			classes = append(classes, Obj(M("code", Str(c)), M("class", Str("permanent"))))
		}
	}
	if len(classes) == 0 {
		return none("the default list: these codes already count (transient, or quota for QUOTA)"), nil
	}
	return to(Path{"classes"}, List(classes...), "added codes count as transient; dropped ones are handed back to the host uncounted (permanent)"), nil
}
