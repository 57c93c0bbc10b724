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
			if isTrue(v) {
				return none("the same with persistent: an unknown failure counts as transient and, with nowhere to go, is retried until the turn is cancelled"), nil
			}
			return none("no switch: an unknown failure counts as transient (classes can hand a known code back: {code, class: permanent})"), nil
		},
		"unknownMaxRetries": func(v, _ Value) ([]out, error) {
			if _, err := whole(v, 0); err != nil {
				return nil, err
			}
			return none("no equivalent: unknown failures count towards failureThreshold like transient ones, and persistent retries them without a count"), nil
		},
	},
}
