package migrate

// dsh-reconnect: retry the same request until the API answers. Its whole
// point is that a turn with nowhere else to go is never given up on, so its
// row alone means persistent.
var reconnect = plugin{
	name: "dsh-reconnect",
	ids:  []string{"dsh-reconnect", "reconnect"},
	always: func() []out {
		return to(Path{"persistent"}, Boolean(true),
			"its row: a failure with nowhere else to go is retried on its channel (1 s doubling to backoffMaxMs, 60 s unless set) until the turn is cancelled")
	},
	keys: map[string]keyMap{
		"maxDelayMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"backoffMaxMs"}, n, "cap of the same-channel backoff; a provider's Retry-After is honoured above it, as in reconnect"), err
		},
		"retryQuota": func(v, _ Value) ([]out, error) {
			if _, err := boolean(v); err != nil {
				return nil, err
			}
			switch {
			case v.IsExpr():
				return exprSwitch("quota.defaultEnabled"), nil
			case isTrue(v):
				return to(Path{"quota", "defaultEnabled"}, Boolean(true),
					"the quota rules on: a spent allowance with nowhere to go is retried with no attempt limit, once per quota.longTermDelayMs (an hour, not every maxDelayMs)"), nil
			}
			return none("the default: a spent allowance fails over, or with nowhere to go is handed back (persistent waits out outages, not spent allowances)"), nil
		},
		"retryUnknown": func(v, _ Value) ([]out, error) {
			if _, err := boolean(v); err != nil {
				return nil, err
			}
			switch {
			case v.IsExpr():
				return to(Path{"retryUnknown"}, v, "the same key, evaluated when the row loads: off caps one model step's unknown failures in a row at unknownMaxRetries"), nil
			case isTrue(v):
				return to(Path{"retryUnknown"}, v, "the same: an unknown failure counts as transient with no cap of its own and, with persistent, is retried until the turn is cancelled"), nil
			}
			return to(Path{"retryUnknown"}, v, "the same: one model step retries at most unknownMaxRetries (3 unless set) unknown failures in a row, then the next goes back to the host; a missing or unconfigured model is never capped"), nil
		},
		"unknownMaxRetries": func(v, config Value) ([]out, error) {
			n, err := whole(v, 0)
			if err != nil {
				return nil, err
			}
			if r, ok := config.Get("retryUnknown"); !ok || isTrue(r) {
				return to(Path{"unknownMaxRetries"}, n, "the same cap; no effect while retryUnknown is on, as in reconnect"), nil
			}
			return to(Path{"unknownMaxRetries"}, n, "the same cap: unknown failures in a row one model step retries; every attempt counts, the host's own retries included (the stock host does not retry unknown codes)"), nil
		},
	},
}
