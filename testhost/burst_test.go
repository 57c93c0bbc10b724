package testhost

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Issue "fail over a dead primary as fast as the evidence allows", through
// the wasm module: every input and output checked against the WIT, each
// step answered byte for byte as the native codec answers it.

// hostRetryStock is dsh-llm-retry as shipped (mode normal, 5 retries).
const hostRetryStock = `{"mode":"normal","maxRetries":5,"retryableCodes":["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"]}`

func modelInfo(now int64, c ch, known bool, code string) string {
	cd := ""
	if code != "" {
		cd = `,"code":` + js(code)
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"model-info","channel":%s,"known":%t,"efforts":[]%s}}`, now, c.json(), known, cd)
}

func fxUnroutable(c ch, code string, keys ...string) string {
	k := "[]"
	if len(keys) > 0 {
		k = `["` + keys[0] + `"]`
	}
	return fmt.Sprintf(`{"kind":"unroutable","channel":%s,"keys":%s,"code":%s}`, c.json(), k, js(code))
}

func vDelegateOriginal(reason, original string) string {
	return fmt.Sprintf(`{"kind":"delegate","reason":%q,"original":%s}`, reason, original)
}

func fxSpill(agent string, from, to ch, code string, failures int) string {
	return fmt.Sprintf(`{"kind":"spill","agent":%s,"from":%s,"to":%s,"code":%s,"failures":%d}`, js(agent), from.json(), to.json(), js(code), failures)
}

// hcBurst is a closed channel's record with a burst in progress.
func hcBurst(c ch, failures int, lastCode string, lastFailureMs int64) string {
	return strings.TrimSuffix(hc(c, "closed", failures, 0, lastCode), "}") + fmt.Sprintf(`,"lastFailureMs":%d}`, lastFailureMs)
}

func fxWaitCut(agent string, c ch) string {
	return fmt.Sprintf(`{"kind":"wait-cut","agent":%s,"channel":%s}`, js(agent), c.json())
}

func burstScenarios() []scenario {
	abc := configJSON([]ch{chA, chC, chB}, classic...)
	spill := []string{`"providerThreshold":0`, `"probes":false`} // spillAfter at its default, 2
	spare := ch{"spare", "m"}
	return []scenario{
		{name: "spill (issue #17): the second failure of one request goes to the fallback at once; the primary stays closed and the next request goes home, with a return row", steps: []step{
			engConfigure([]ch{chA, chB}, spill...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0), out(vDefer)),
			decide(request(1600, "a1", chA), out(vPass)),
			decide(requestErr(1700, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0),
				out(vRetry, fxSpill("a1", chA, chB, "SERVER", 2))),
			decide(request(1700, "a1", chA), out(vSwap(chB))),
			decide(settled(2000, "a1"), out(vPass)),
			snapshot(health(hc(chA, "closed", 2, 0, "SERVER"))),
			// Home again: the session left it for one request, so its return is said (the row).
			decide(request(3000, "a1", chA), out(vPass, fxReturned("a1", chB, chA))),
		}},
		{name: "spill across processes (issue #17 item 7): short runs one after another against a dead primary; the second run's first failure is the burst's third and opens it", steps: []step{
			// Run 1 (one host process): two primary requests, then the spill. The
			// shim saves health on the spill (its burst grew without a transition).
			engConfigure([]ch{chA, chB}, spill...),
			decide(request(1000, "job", chA), out(vPass)),
			decide(requestErr(1100, "job", "mock", beforeHost, code("TRANSPORT"), hostRetryStock, 0), out(vDefer)),
			decide(request(1600, "job", chA), out(vPass)),
			decide(requestErr(1700, "job", "mock", beforeHost, code("TRANSPORT"), hostRetryStock, 0),
				out(vRetry, fxSpill("job", chA, chB, "TRANSPORT", 2))),
			snapshot(health(hcBurst(chA, 2, "TRANSPORT", 1700))),
			// Run 2, a new process 20 s later, within the burst window: it goes on from the record.
			{export: "configure", in: configJSON([]ch{chA, chB}, spill...), want: resolved([]ch{chA, chB}, spill...), on: 1},
			{export: "restore", in: restoreAt(21_000, health(hcBurst(chA, 2, "TRANSPORT", 1700))), want: restored(1, 1), on: 1},
			{export: "decide", in: request(21_000, "job", chA), want: out(vPass), on: 1},
			{export: "decide", in: requestErr(21_100, "job", "mock", beforeHost, code("TRANSPORT"), hostRetryStock, 0),
				want: out(vRetry, fxCircuit(chA, "closed", "open", "TRANSPORT", "transient", 81_100), fxFailover("job", chA, chB, "TRANSPORT", "transient")), on: 1},
		}},
		{name: "spill across processes: a run past the burst window after the last one's last failure starts a new burst", steps: []step{
			engConfigure([]ch{chA, chB}, spill...),
			restore(restoreAt(200_000, health(hcBurst(chA, 2, "TRANSPORT", 1700))), restored(1, 1)),
			decide(request(200_000, "job", chA), out(vPass)),
			decide(requestErr(200_100, "job", "mock", beforeHost, code("TRANSPORT"), hostRetryStock, 0), out(vDefer)),
			snapshot(health(hcBurst(chA, 1, "TRANSPORT", 200_100))),
		}},
		{name: "wait-cut (issue #17): a turn held for the first channel back is cut when a usable backup is chosen", steps: []step{
			engConfigure([]ch{chA, chC}, engClassic(`"failureThreshold":1`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry, fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000), fxFailover("a1", chA, chC, "QUOTA", "quota"))),
			decide(request(1100, "a1", chA), out(vSwap(chC))),
			// Both open; A is back first, at 61000: the turn is held until then.
			decide(requestErr(1200, "a1", "alt", beforeHost, code("QUOTA"), "", 0),
				out(vWait(59800), fxCircuit(chC, "closed", "open", "QUOTA", "quota", 61200), fxRetry("a1", chA, 1, 59800, "QUOTA"))),
			decide(engSetBackup(2000, spare), out(vPass, fxWaitCut("a1", spare))),
			decide(request(2100, "a1", chA), out(vSwap(spare))),
		}},
		{name: "stock host, 429 forever: the third failure before the host opens the primary and fails over", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, failure("RATE_LIMIT", "429", 429, 0), hostRetryStock, 0), out(vDefer)),
			decide(request(1600, "a1", chA), out(vPass)),
			decide(requestErr(1700, "a1", "mock", beforeHost, failure("RATE_LIMIT", "429", 429, 0), hostRetryStock, 0), out(vDefer)),
			snapshot(health(hc(chA, "closed", 2, 0, "RATE_LIMIT"))),
			decide(request(2700, "a1", chA), out(vPass)),
			decide(requestErr(2800, "a1", "mock", beforeHost, failure("RATE_LIMIT", "429", 429, 0), hostRetryStock, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "transient", 62800),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "transient"))),
			decide(request(2900, "a1", chA), out(vSwap(chB))),
		}},
		{name: "500, 500, ok: the success resets the burst, and the next blip starts from zero", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0), out(vDefer)),
			decide(request(1600, "a1", chA), out(vPass)),
			decide(requestErr(1700, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0), out(vDefer)),
			decide(request(2700, "a1", chA), out(vPass)),
			decide(settled(3000, "a1"), out(vPass)),
			snapshot(health(hc(chA, "closed", 0, 0, "SERVER"))),
			decide(request(4000, "a1", chA), out(vPass)),
			decide(requestErr(4100, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0), out(vDefer)),
			decide(request(4600, "a1", chA), out(vPass)),
			decide(requestErr(4700, "a1", "mock", beforeHost, code("SERVER"), hostRetryStock, 0), out(vDefer)),
		}},
		{name: "mode always: the host never declines; the count alone fails over", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("TRANSPORT"), `{"mode":"always","retryableCodes":[]}`, 0), out(vDefer)),
			decide(request(1200, "a1", chA), out(vPass)),
			decide(requestErr(1300, "a1", "mock", beforeHost, code("TRANSPORT"), `{"mode":"always","retryableCodes":[]}`, 0), out(vDefer)),
			decide(request(1400, "a1", chA), out(vPass)),
			decide(requestErr(1500, "a1", "mock", beforeHost, code("TRANSPORT"), `{"mode":"always","retryableCodes":[]}`, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "TRANSPORT", "transient", 61500),
					fxFailover("a1", chA, chB, "TRANSPORT", "transient"))),
		}},
		{name: "no host policy: deferred and counted once, the plugin waits, the third failure fails over", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("SERVER"), "", 0), out(vDefer)),
			decide(requestErr(1100, "a1", "mock", afterHost, code("SERVER"), "", 0), out(vWait(0), fxRetry("a1", chA, 1, 0, "SERVER"))),
			decide(request(1200, "a1", chA), out(vPass)),
			decide(requestErr(1300, "a1", "mock", beforeHost, code("SERVER"), "", 0), out(vDefer)),
			decide(requestErr(1300, "a1", "mock", afterHost, code("SERVER"), "", 0), out(vWait(0), fxRetry("a1", chA, 2, 0, "SERVER"))),
			snapshot(health(hc(chA, "closed", 2, 0, "SERVER"))),
			decide(request(1400, "a1", chA), out(vPass)),
			decide(requestErr(1500, "a1", "mock", beforeHost, code("SERVER"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "SERVER", "transient", 61500),
					fxFailover("a1", chA, chB, "SERVER", "transient"))),
		}},
		{name: "no routable fallback: the threshold defers to the host's budget, then after-host opens and waits", steps: []step{
			configure(configJSON([]ch{chA}, classic...), resolvedDefaults(chA)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryStock, 0), out(vDefer)),
			decide(request(1200, "a1", chA), out(vPass)),
			decide(requestErr(1300, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryStock, 0), out(vDefer)),
			decide(request(1400, "a1", chA), out(vPass)),
			decide(requestErr(1500, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryStock, 0), out(vDefer)),
			decide(request(1600, "a1", chA), out(vPass)),
			decide(requestErr(1700, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryStock, 0), out(vDefer)),
			decide(requestErr(1700, "a1", "mock", afterHost, code("RATE_LIMIT"), hostRetryStock, 0),
				out(vWait(60000),
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "transient", 61700),
					fxRetry("a1", chA, 1, 60000, "RATE_LIMIT"))),
		}},
		{name: "stall cut with a fallback opens the channel; the cut call's TIMEOUT fails over at once", steps: []step{
			configureOnly(configJSON([]ch{chA, chB}, `"stall":{"firstChunkMs":5000,"idleMs":5000}`, `"providerThreshold":0`, `"probes":false`)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(streamCheck(6000, chA, "", 1000, 0, -1, false),
				out(vCut("no output for 5.0 s since the request was sent (dsh-resilience stall.firstChunkMs is 5000)"),
					fxStall(chA, "", "first-chunk", 5000, 5000, 0),
					fxCircuit(chA, "closed", "open", "stall", "transient", 66000))),
			decide(requestErr(6010, "a1", "mock", beforeHost, failure("TIMEOUT", "no output for 5.0 s", 0, 0), hostRetryStock, 0),
				out(vRetry, fxFailover("a1", chA, chB, "TIMEOUT", "transient"))),
			// A compaction cut on b trips it too: nowhere left but a, which is open: no trip.
			decide(streamCheck(20_000, chB, "compaction", 15_000, 0, -1, false),
				out(vCut("no output for 5.0 s since the request was sent (dsh-resilience stall.purposes.compaction.firstChunkMs is 5000)"),
					fxStall(chB, "compaction", "first-chunk", 5000, 5000, 0))),
		}},
		{name: "a target the host cannot serve (start) is audited by key and skipped; resolved later, it is routable again", steps: []step{
			configure(abc, resolvedDefaults(chA, chC, chB)),
			decide(modelInfo(500, chC, false, "NO_ADAPTER"), out(vPass, fxUnroutable(chC, "NO_ADAPTER", "chain[1]"))),
			decide(modelInfo(600, chC, false, "NO_ADAPTER"), out(vPass)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("QUOTA"), hostRetryStock, 0),
				out(vRetry, fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61100), fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(modelInfo(2000, chC, true, ""), out(vPass, fmt.Sprintf(`{"kind":"routable","channel":%s,"keys":["chain[1]"]}`, chC.json()))),
			decide(request(2100, "a2", chA), out(vSwap(chC))),
		}},
		{name: "a failover target that fails NO_ADAPTER is skipped at once; nothing left: the primary's own failure goes back", steps: []step{
			configure(configJSON([]ch{chA, chC}, classic...), resolvedDefaults(chA, chC)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, failure("QUOTA", "insufficient balance", 402, 0), hostRetryStock, 0),
				out(vRetry, fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61100), fxFailover("a1", chA, chC, "QUOTA", "quota"))),
			decide(request(1200, "a1", chA), out(vSwap(chC))),
			decide(requestErr(1300, "a1", "alt", beforeHost, code("NO_ADAPTER"), "", 0),
				out(vDelegateOriginal("no-routable-fallback", failure("QUOTA", "insufficient balance", 402, 0)),
					fxUnroutable(chC, "NO_ADAPTER", "chain[1]"),
					fxGiveUpN("a1", chC, "no-routable-fallback", "NO_ADAPTER", 1, fxTried(chA, "QUOTA"), fxTried(chC, "NO_ADAPTER")))),
		}},
		{name: "bad values that used to slip through are refused, naming the key", steps: []step{
			fails("configure", `{"failureThreshold":null}`, `config key "failureThreshold": must be an integer between 0 and 2147483647, not null`),
			failsRaw("configure", `{"cooldownMs":"NaN"}`, `config key "cooldownMs": must be an integer between 0 and 9007199254740992, not NaN`),
			failsRaw("configure", `{"stall":{"idleMs":"Infinity"}}`, `config key "stall.idleMs": must be an integer between 0 and 9007199254740992, not Infinity`),
			fails("configure", `{"tools":{"maxAttempts":null}}`, `config key "tools.maxAttempts": must be an integer`),
			fails("configure", `{"classes":[{"code":"","class":"quota"}]}`, `config key "classes[0].code": must be a non-empty code`),
			fails("configure", `{"classes":[{"code":"RATE_LIMIT","class":"quota"},{"code":"rate_limit","class":"transient"}]}`,
				`config key "classes[1].code": "rate_limit" duplicates classes[0].code`),
			fails("configure", `{"tools":{"retry":["web_fetch","web_fetch"]}}`, `config key "tools.retry[1]": "web_fetch" duplicates tools.retry[0]`),
		}},
	}
}

func TestBurstScenarios(t *testing.T)    { runScenarios(t, burstScenarios()) }
func TestBurstDifferential(t *testing.T) { differential(t, burstScenarios()) }

// The model-unavailable wordings and the codes handed back, through the wasm module.
func TestScenarioModelUnavailableWording(t *testing.T) {
	for _, f := range []string{
		code("MODEL_NOT_FOUND"), code("model_not_configured"), code("MODEL_NOT_CONFIGURED"),
		failure("PI_AI_ERROR", "model x is not supported by any configured account", 0, 0),
		failure("PI_AI_ERROR", "type=model_not_configured", 0, 0),
		failure("UNKNOWN", "not configured for this account", 0, 0),
		failure("PI_AI_ERROR", "no model configured", 0, 0),
		failure("HTTP_500", "model_not_found", 500, 0),
		failure("PI_AI_ERROR", "模型未配置", 0, 0),
		failure("PI_AI_ERROR", "不支持该模型", 0, 0),
	} {
		t.Run(f, func(t *testing.T) {
			runSteps(t, []step{
				configure(cfgAB, resolvedDefaults(chA, chB)),
				decide(request(1000, "a1", chA), out(vPass)),
				{export: "decide", in: requestErr(1000, "a1", "mock", beforeHost, f, hostRetryStock, 0), check: func(t *testing.T, out []byte) {
					require.Contains(t, string(out), `"class":"model-unavailable"`)
					require.Contains(t, string(out), `"kind":"failover"`)
				}},
			})
		})
	}
	for _, c := range []string{"INVALID_REPLAY_STATE", "UNSUPPORTED_OPTION", "UNSUPPORTED_REASONING_EFFORT"} {
		t.Run(c, func(t *testing.T) {
			runSteps(t, []step{
				configure(cfgAB, resolvedDefaults(chA, chB)),
				decide(request(1000, "a1", chA), out(vPass)),
				decide(requestErr(1000, "a1", "mock", beforeHost, code(c), hostRetryStock, 0), out(vDefer)),
				decide(requestErr(1000, "a1", "mock", afterHost, code(c), hostRetryStock, 0),
					out(vDelegate("not-recoverable"), fxGiveUp("a1", chA, "not-recoverable", c, fxTried(chA, c)))),
				snapshot(health()),
			})
		})
	}
}
