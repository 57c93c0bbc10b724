package testhost

import (
	"fmt"
	"testing"
)

// quotaDefault is configure's echo of the quota defaults (policy/quota.go).
const quotaDefault = `{"active":false,"longTermDelayMs":3600000,"defaultEnabled":true,"failOpen":true,"exhaustedCooldownMs":3600000,"balances":[]}`

// The quota rules through the wasm module: every input and output checked
// against the WIT (runStep), and byte for byte the same as the native codec.

var (
	qA = ch{"pa", "m1"}
	qB = ch{"pb", "m1"}
)

// quotaRow is a row with one pool "main" of qA, qB (qB with effort high), a
// two-second long-term wait and a balance script on pa.
var quotaRow = `{"probes":false,"providerThreshold":0,` +
	`"pools":[{"name":"main","routes":[{"provider":"pa","model":"m1"},{"provider":"pb","model":"m1","reasoningEffort":"high"}]}],` +
	`"quota":{"longTermDelayMs":2000,"exhaustedCooldownMs":60000,"balances":[{"provider":"pa","script":["./balance.sh","--json"],` +
	`"timeoutMs":1000,"refreshMs":10000,"apiKeyEnv":"PA_KEY","env":[{"name":"REGION","value":"cn"}],"minimumRemaining":2.5,"unit":"CNY"}]}}`

func setQuota(now int64, agent, mode string) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"set-quota","agent":%s,"mode":%q}}`, now, js(agent), mode)
}

func setPool(now int64, agent, mode, pool string) string {
	p := ""
	if pool != "" {
		p = `,"pool":` + js(pool)
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"set-pool","agent":%s,"mode":%q%s}}`, now, js(agent), mode, p)
}

func balanceReading(now int64, provider string, ok bool, remaining string) string {
	r := ""
	if remaining != "" {
		r = `,"remaining":` + remaining
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"balance-reading","provider":%s,"ok":%t%s}}`, now, js(provider), ok, r)
}

func wake(now int64) string { return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"wake"}}`, now) }

func inspect(now int64, agent string) string {
	if agent == "" {
		return fmt.Sprintf(`{"nowMs":%d}`, now)
	}
	return fmt.Sprintf(`{"nowMs":%d,"agent":%s}`, now, js(agent))
}

func inspects(in, want string) step { return step{export: "inspect", in: in, want: want} }

// resolvedQuotaOff is the resolved config of a row with every default but
// quota.active false (and quota.defaultEnabled as given).
func resolvedQuotaOff(defaultEnabled bool) string {
	return `{"chain":[],"failureThreshold":3,"burstWindowMs":120000,"cooldownMs":60000,"maxCooldownMs":1800000,` +
		`"providerThreshold":2,"backoffBaseMs":1000,"backoffMaxMs":30000,"maxFailovers":4,"giveUpAfterMs":900000,` +
		`"retryBudgetPercent":20,"retryBudgetFloor":5,"spillAfter":2,"maxClockSkewMs":180000,"recovery":"return","probes":true,"classes":[],` +
		`"stall":` + stallDefault + `,"slow":` + slowDefault + `,"tools":` + toolsDefault + `,"pools":[],` +
		fmt.Sprintf(`"quota":{"active":false,"longTermDelayMs":3600000,"defaultEnabled":%t,"failOpen":true,"exhaustedCooldownMs":3600000,"balances":[]},"probeMaxTokens":8,"providerCooldownMs":0,"stripReasoningEffort":[],"persistent":false,"contextReservePercent":20,"retryUnknown":true,"unknownMaxRetries":3,"skill":false,"hedge":`+hedgeDefault+`,"healthPruneMs":86400000,"notify":[]}`, defaultEnabled)
}

func quotaScenarios() []scenario {
	mainRoutes := `[{"provider":"pa","model":"m1"},{"provider":"pb","model":"m1","reasoningEffort":"high"}]`
	return []scenario{
		{name: "configure echoes pools and quota with every default filled in", steps: []step{
			configure(`{"pools":[{"name":"main","routes":[{"provider":"pa","model":"m1"}]}]}`,
				`{"config":{"chain":[],"failureThreshold":3,"burstWindowMs":120000,"cooldownMs":60000,"maxCooldownMs":1800000,`+
					`"providerThreshold":2,"backoffBaseMs":1000,"backoffMaxMs":30000,"maxFailovers":4,"giveUpAfterMs":900000,`+
					`"retryBudgetPercent":20,"retryBudgetFloor":5,"spillAfter":2,"maxClockSkewMs":180000,"recovery":"return","probes":true,"classes":[],`+
					`"stall":`+stallDefault+`,"slow":`+slowDefault+`,"tools":`+toolsDefault+`,`+
					`"pools":[{"name":"main","routes":[{"provider":"pa","model":"m1"}]}],`+
					`"quota":{"active":true,"longTermDelayMs":3600000,"defaultEnabled":true,"failOpen":true,"exhaustedCooldownMs":3600000,"balances":[]},"probeMaxTokens":8,"providerCooldownMs":0,"stripReasoningEffort":[],"persistent":false,"contextReservePercent":20,"retryUnknown":true,"unknownMaxRetries":3,"skill":false,"hedge":`+hedgeDefault+`,"healthPruneMs":86400000,"notify":[]},"hedging":false}`),
			configureOnly(quotaRow),
		}},
		{name: "quota.active: false keeps the settings with the rules off, and the resolved config configures to itself", steps: []step{
			configure(`{"quota":{"active":false,"defaultEnabled":false}}`, `{"config":`+resolvedQuotaOff(false)+`,"hedging":false}`),
			// A row without quota resolves to active:false too; fed back, it stays off.
			configure(resolvedQuotaOff(true), `{"config":`+resolvedQuotaOff(true)+`,"hedging":false}`),
			fails("configure", `{"pools":[{"name":"main","routes":[{"provider":"p","model":"m"}]}],"quota":{"active":false}}`,
				`config key "quota.active": cannot be false in a row with pools: the quota rules are what pools are for`),
			failsRaw("configure", `{"quota":{"active":"yes"}}`, `config key "quota.active": must be a boolean`),
		}},
		{name: "402 on A: mark pa, fail over to B at once, B's effort on the next request", steps: []step{
			configureOnly(quotaRow),
			// The first step starts pa's script and schedules the run's deadline.
			decide(request(1000, "s1", qA), out(vPass, `{"kind":"refresh-balance","provider":"pa"}`, `{"kind":"schedule-refresh","atMs":7000}`)),
			decide(`{"nowMs":1001,"event":{"kind":"model-info","channel":{"provider":"pb","model":"m1"},"known":true,"efforts":["high"]}}`, out(vPass)),
			decide(requestErr(1100, "s1", "pa", beforeHost, failure("HTTP_402", "Insufficient Balance", 402, 0), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(ch{"pa", "*"}, "closed", "open", "HTTP_402", "quota", 61100),
					fxFailoverN("s1", qA, qB, "HTTP_402", "quota", 0),
					`{"kind":"quota-routed","agent":"s1","pool":"main","from":{"provider":"pa","model":"m1"},"to":{"provider":"pb","model":"m1","reasoningEffort":"high"},"cause":"HTTP_402"}`,
					engFxWake(61100))), // the mark's end is a wake of its own
			decide(request(1200, "s1", qA), out(`{"kind":"swap","provider":"pb","model":"m1","reasoningEffort":"high"}`)),
		}},
		{name: "whole pool exhausted: a long-term wait, no limit, left on recovery", steps: []step{
			configureOnly(quotaRow),
			decide(balanceReading(500, "pa", true, "100"), ""),
			decide(request(1000, "s1", qA), out(vPass)),
			decide(requestErr(1100, "s1", "pa", beforeHost, failure("HTTP_402", "", 402, 0), "", 0), ""),
			decide(request(1200, "s1", qA), ""),
			decide(requestErr(1300, "s1", "pb", beforeHost, failure("RATE_LIMIT", "已达到 Token Plan 用量上限，请稍后再试", 429, 0), "", 0),
				out(vHeld(2000),
					fxCircuit(ch{"pb", "*"}, "closed", "open", "RATE_LIMIT", "quota", 61300),
					`{"kind":"quota-wait","agent":"s1","phase":"entered","provider":"pb","pool":"main","enteredAtMs":1300,"attempts":1,"nextAttemptAtMs":3300}`,
					fxRetry("s1", qA, 1, 2000, "RATE_LIMIT"))),
			inspects(inspect(2000, "s1"), `{"active":true,"defaultEnabled":true,`+
				`"pools":[{"name":"main","choice":{"provider":"pa","model":"m1"},"usable":false,"routes":[`+
				`{"route":{"provider":"pa","model":"m1"},"usable":false,"why":"exhausted"},`+
				`{"route":{"provider":"pb","model":"m1","reasoningEffort":"high"},"usable":false,"why":"exhausted"}]}],`+
				`"providers":[{"provider":"pa","markedAtMs":1100,"markedUntilMs":61100,"hasBalance":true,"unit":"CNY","minimumRemaining":2.5,"refreshMs":10000,"stale":false,"refreshing":false,"reading":{"atMs":500,"ok":true,"remaining":100}},`+
				`{"provider":"pb","markedAtMs":1300,"markedUntilMs":61300,"hasBalance":false}],`+
				`"session":{"agent":"s1","enabled":true,"enabledSource":"default","pool":"main","poolSource":"inferred","route":{"provider":"pa","model":"m1"},`+
				`"wait":{"agent":"s1","phase":"waiting","provider":"pb","pool":"main","enteredAtMs":1300,"attempts":1,"nextAttemptAtMs":3300}}}`),
			decide(request(3300, "s1", qA), out(vPass, fxReturned("s1", qB, qA))),
			decide(requestErr(3400, "s1", "pa", beforeHost, failure("HTTP_402", "", 402, 0), "", 0),
				out(vHeld(2000),
					fxCircuit(ch{"pa", "*"}, "open", "open", "HTTP_402", "quota", 63400), // a fresh failure extends the mark
					`{"kind":"quota-wait","agent":"s1","phase":"waiting","provider":"pa","pool":"main","enteredAtMs":1300,"attempts":2,"nextAttemptAtMs":5400}`,
					fxRetry("s1", qA, 2, 2000, "HTTP_402"),
					engFxWake(61300))), // pb's mark now ends first
			decide(request(5400, "s1", qA), out(vPass)),
			decide(settled(5500, "s1"), out(vPass,
				`{"kind":"quota-wait","agent":"s1","phase":"left","reason":"recovered","provider":"pa","pool":"main","enteredAtMs":1300,"attempts":2,"nextAttemptAtMs":5400}`,
				fxCircuit(ch{"pa", "*"}, "open", "closed", "recovered", "", 0))),
		}},
		{name: "switch off during the wait leaves it; pool commands pick a route at once", steps: []step{
			configureOnly(`{"probes":false,"pools":[{"name":"solo","routes":[{"provider":"pa","model":"m1"}]},{"name":"alt","routes":` + mainRoutes + `}]}`),
			decide(request(1000, "s1", qA), ""),
			decide(requestErr(1100, "s1", "pa", beforeHost, failure("QUOTA", "quota exceeded", 0, 0), "", 0), ""),
			// pa/m1 is in both pools: nothing is inferred, and the wait holds the chain's (empty) turn.
			decide(setQuota(1200, "s1", "off"), out(vPass,
				`{"kind":"quota-wait","agent":"s1","phase":"left","reason":"disabled","provider":"pa","enteredAtMs":1100,"attempts":1,"nextAttemptAtMs":3601100}`,
				`{"kind":"quota-session","agent":"s1","enabled":false,"enabledSource":"session","poolSource":"default"}`)),
			// Put into "alt": pa is marked, so the choice is pb, and the next request goes there.
			decide(setPool(1300, "s1", "pool", "alt"), out(vPass,
				`{"kind":"quota-routed","agent":"s1","pool":"alt","to":{"provider":"pb","model":"m1","reasoningEffort":"high"},"cause":"assigned"}`,
				`{"kind":"quota-session","agent":"s1","enabled":false,"enabledSource":"session","pool":"alt","poolSource":"session","route":{"provider":"pb","model":"m1","reasoningEffort":"high"}}`)),
			decide(request(1400, "s1", qA), out(vSwap(qB))),
			decide(setPool(1500, "s1", "off", ""), out(vPass,
				`{"kind":"quota-session","agent":"s1","enabled":false,"enabledSource":"session","poolSource":"off"}`)),
			fails("decide", `{"nowMs":1,"event":{"kind":"set-pool","agent":"s1","mode":"pool"}}`, `input "event.pool": is required with mode pool`),
		}},
		{name: "balance readings: missing, below the minimum, lifting a mark", steps: []step{
			configureOnly(quotaRow),
			decide(wake(1000), out(vPass, `{"kind":"refresh-balance","provider":"pa"}`, `{"kind":"schedule-refresh","atMs":7000}`)),
			decide(balanceReading(1500, "pa", false, ""), out(vPass, `{"kind":"schedule-refresh","atMs":11000}`)),
			decide(request(1550, "s0", qA), out(vPass)), // nothing reported: usable (failOpen)
			// An out-of-schedule reading (a route pick refreshing first) counts as a run.
			decide(balanceReading(1600, "pa", true, "2"), out(vPass, `{"kind":"schedule-refresh","atMs":11600}`)), // below 2.5: new sessions go to pb
			inspects(inspect(1700, ""), `{"active":true,"defaultEnabled":true,`+
				`"pools":[{"name":"main","choice":{"provider":"pb","model":"m1","reasoningEffort":"high"},"usable":true,"routes":[`+
				`{"route":{"provider":"pa","model":"m1"},"usable":false,"why":"below-minimum"},`+
				`{"route":{"provider":"pb","model":"m1","reasoningEffort":"high"},"usable":true,"why":"no-reading"}]}],`+
				`"providers":[{"provider":"pa","hasBalance":true,"unit":"CNY","minimumRemaining":2.5,"refreshMs":10000,"stale":false,"refreshing":false,"reading":{"atMs":1600,"ok":true,"remaining":2}},`+
				`{"provider":"pb","hasBalance":false}]}`),
			decide(request(2000, "s1", qA), out(vSwap(qB))), // a new session is kept off the low provider
			decide(request(2050, "s0", qA), out(vPass)),     // a running one is never moved by a reading
			decide(requestErr(2100, "s0", "pa", beforeHost, failure("HTTP_402", "", 402, 0), "", 0), ""),
			decide(balanceReading(12_100, "pa", true, "50.75"), out(vPass, fxCircuit(ch{"pa", "*"}, "open", "closed", "balance-restored", "", 0),
				engFxWake(0), // the lifted mark has no end left to wake for
				`{"kind":"schedule-refresh","atMs":22100}`)),
		}},
		{name: "a mark in a provider's health record (a restart, another host) keeps new sessions off until it lapses", steps: []step{
			configureOnly(`{"probes":false,"pools":[{"name":"main","routes":[{"provider":"pa","model":"m1"},{"provider":"pb","model":"m1"}]}]}`),
			step{export: "restore", in: restoreAt(5000, `{"channels":[`+markRecord+`]}`), want: restored(1, 1)},
			step{export: "snapshot", want: `{"channels":[` + markRecord + `]}`},
			decide(request(6000, "s1", qA), out(vSwap(qB), engFxWake(9000))),
			decide(request(9000, "s2", qA), out(vPass)),
			step{export: "restore", raw: true, in: restoreAt(9500, `{"channels":[{"channel":{"provider":"pb","model":"*"},"state":"open","failures":0,"opens":0,"openUntilMs":20000,"lastCode":"X","changedAtMs":1,"version":1,"markedAtMs":-1}]}`),
				want: restoredSkipping(1, 0, `health "channels[0].markedAtMs": must be an integer between 0 and 9007199254740992`)},
		}},
		{name: "quota config errors name the key", steps: []step{
			fails("configure", `{"pools":[{"name":"default","routes":[{"provider":"p","model":"m"}]}]}`, `config key "pools[0].name": "default" is reserved`),
			fails("configure", `{"pools":[{"name":"Main","routes":[{"provider":"p","model":"m"}]}]}`, `config key "pools[0].name": "Main": only lowercase letters, digits and hyphens`),
			fails("configure", `{"quota":{"longTermDelayMs":2147483648}}`, `config key "quota.longTermDelayMs": must be between 100 and 2147483647`),
			fails("configure", `{"quota":{"balances":[{"provider":"p","script":[]}]}}`, `config key "quota.balances[0].script": must be an argv list`),
			failsRaw("configure", `{"quota":{"balances":[{"provider":"p","script":"curl x | jq"}]}}`, `config key "quota.balances[0].script": must be an array`),
			failsRaw("configure", `{"quota":{"longTermDelay":5}}`, `config key "quota.longTermDelay": unknown key`),
			failsRaw("configure", `{"quota":{"balances":[{"provider":"p","script":["x"],"minimumRemaining":"5"}]}}`, `config key "quota.balances[0].minimumRemaining": must be a number`),
			failsRaw("configure", `{"pools":{"main":[]}}`, `config key "pools": must be an array`),
		}},
	}
}

func TestQuotaScenarios(t *testing.T)    { runScenarios(t, quotaScenarios()) }
func TestQuotaDifferential(t *testing.T) { differential(t, quotaScenarios()) }

// markRecord is pa's provider breaker as a host that saw its allowance spent
// at 1000 wrote it: open until the provider's reset at 9000, with the mark.
const markRecord = `{"channel":{"provider":"pa","model":"*"},"state":"open","failures":0,"opens":0,"openUntilMs":9000,"lastCode":"HTTP_402","changedAtMs":1000,"version":1,"markedAtMs":1000}`
