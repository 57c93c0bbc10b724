package migrate

// dsh-daruma: channel failover along a chain, a backup channel.
var daruma = plugin{
	name: "dsh-daruma",
	ids:  []string{"dsh-daruma", "daruma"},
	keys: map[string]keyMap{
		"channels": func(v, _ Value) ([]out, error) {
			chain, err := channels(v)
			return to(Path{"chain"}, chain, "same order; the first is the primary"), err
		},
		"failureBudget": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 1)
			return to(Path{"failureThreshold"}, n,
				"counts every failure on a channel within burstWindowMs, the host's own retries included (daruma counted the rounds dsh-llm-retry gave up on)"), err
		},
		"cooldownMs": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"cooldownMs"}, n, "doubles while the outage lasts, up to maxCooldownMs; a provider's Retry-After extends it"), err
		},
		"giveUpBudget": func(v, _ Value) ([]out, error) {
			n, err := whole(v, 0)
			return to(Path{"maxFailovers"}, n, "failovers without a success in between; giveUpAfterMs (15 min) bounds one agent's recovery too"), err
		},
		"stateFile": noneKey("no equivalent: channel health lives in <stateDir>/health.json ($DSH_HOME/dsh-resilience; set stateDir to move it); daruma's file is not read"),
		"logFile":   noneKey("no equivalent: failovers, give-ups and every decision go to <stateDir>/audit.jsonl; a failover writes no session event of its own (the web client's row comes from the host's request/header)"),
	},
}
