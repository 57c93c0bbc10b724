package testhost

import (
	"fmt"
	"strings"
	"testing"
)

// The recovery engine through the wasm module: the rules that policy's
// circuit, probe, route, effort, budget, classify, merge and step tests check
// natively (burst windows, provider breakers, growing cooldowns, wakes and
// probes, the user's backup, reasoning efforts, recovery, the cross-agent retry
// budget, every give-up reason, class overrides, restore merging), as exact
// JSON answers derived from policy/*.go, every input and output validated
// against wit/policy.wit by runSteps.
//
// Helpers here carry an `eng` prefix so they never collide with the shared
// fixtures (fixtures_test.go), which other scenario files extend.

var (
	// engChZ is a third model of chA's and chB's provider, outside every chain:
	// only the provider breaker keeps it away.
	engChZ = ch{"mock", "mock-z"}
	// engProvMock is the provider-level breaker of "mock".
	engProvMock = ch{"mock", "*"}
)

// engConfigure configures chs with the overrides and expects them resolved.
func engConfigure(chs []ch, overrides ...string) step {
	return configure(configJSON(chs, overrides...), resolved(chs, overrides...))
}

// engClassic is classic plus more overrides.
func engClassic(overrides ...string) []string { return append(overrides, classic...) }

// Events.

func engWake(now int64) string { return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"wake"}}`, now) }

func engProbeOK(now int64, c ch) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"probe-result","channel":%s,"ok":true}}`, now, c.json())
}

func engProbeFail(now int64, c ch, fail string) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"probe-result","channel":%s,"ok":false,"failure":%s}}`, now, c.json(), fail)
}

func engModelInfo(now int64, c ch, known bool, efforts ...string) string {
	if efforts == nil {
		efforts = []string{}
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"model-info","channel":%s,"known":%t,"efforts":%s}}`, now, c.json(), known, js(efforts))
}

func engSetBackup(now int64, c ch) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"set-backup","channel":%s}}`, now, c.json())
}

// engClearBackup is set-backup without a channel; null says the same.
func engClearBackup(now int64, null bool) string {
	if null {
		return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"set-backup","channel":null}}`, now)
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"set-backup"}}`, now)
}

// Outputs.

func engVSwapDrop(c ch) string {
	return fmt.Sprintf(`{"kind":"swap","provider":%s,"model":%s,"dropReasoningEffort":true}`, js(c.provider), js(c.model))
}

func engFxWake(at int64) string { return fmt.Sprintf(`{"kind":"schedule-wake","atMs":%d}`, at) }

func engFxProbe(c ch) string { return fmt.Sprintf(`{"kind":"probe","channel":%s}`, c.json()) }

func engFxEffortDropped(agent string, c ch, effort string) string {
	return fmt.Sprintf(`{"kind":"effort-dropped","agent":%s,"channel":%s,"effort":%s}`, js(agent), c.json(), js(effort))
}

// engOpenA is the usual trip: agent a1 is routed to A at now, and a
// before-host QUOTA opens A for cooldown ms and fails a1 over to `to`.
// wake is the schedule-wake that follows when probes are on (0: none).
func engOpenA(now, cooldown int64, to ch, wake int64) []step {
	fx := []string{
		fxCircuit(chA, "closed", "open", "QUOTA", "quota", now+cooldown),
		fxFailover("a1", chA, to, "QUOTA", "quota"),
	}
	if wake != 0 {
		fx = append(fx, engFxWake(wake))
	}
	return []step{
		decide(request(now, "a1", chA), out(vPass)),
		decide(requestErr(now, "a1", "mock", beforeHost, code("QUOTA"), "", 0), out(vRetry, fx...)),
	}
}

func engSteps(parts ...[]step) []step {
	var all []step
	for _, p := range parts {
		all = append(all, p...)
	}
	return all
}

func engOne(s ...step) []step { return s }

func engineScenarios() []scenario {
	scs := []scenario{
		// ---- burst window (TestBurstWindowForgetsOldFailures)
		{name: "burst window: failures further apart than the window start a new burst; within it the threshold opens", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"failureThreshold":2`, `"burstWindowMs":10000`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			// STREAM_CLOSED is not a code the host's policy retries: the plugin waits itself.
			decide(requestErr(1100, "a1", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("a1", chA, 1, 0, "STREAM_CLOSED"))),
			snapshot(health(hc(chA, "closed", 1, 0, "STREAM_CLOSED"))),
			decide(request(11101, "a1", chA), out(vPass)),
			// 10001 ms after the last failure: the count starts again at 1, no open.
			decide(requestErr(11101, "a1", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("a1", chA, 2, 0, "STREAM_CLOSED"))),
			snapshot(health(hc(chA, "closed", 1, 0, "STREAM_CLOSED"))),
			decide(request(12101, "a1", chA), out(vPass)),
			// 1000 ms later, within the window: the second of this burst opens A.
			decide(requestErr(12101, "a1", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "STREAM_CLOSED", "transient", 72101),
					fxFailover("a1", chA, chB, "STREAM_CLOSED", "transient"))),
		}},
		{name: "burst window: failures exactly the window apart are still one burst", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"failureThreshold":2`, `"burstWindowMs":10000`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", afterHost, code("STREAM_CLOSED"), "", 0),
				out(vWait(0), fxRetry("a1", chA, 1, 0, "STREAM_CLOSED"))),
			decide(request(11100, "a1", chA), out(vPass)),
			decide(requestErr(11100, "a1", "mock", afterHost, code("STREAM_CLOSED"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "STREAM_CLOSED", "transient", 71100),
					fxFailover("a1", chA, chB, "STREAM_CLOSED", "transient"))),
		}},

		// ---- provider breaker (TestProviderOpensWhenEnoughModelsAreOpen)
		{name: "provider breaker: two open models open the provider, its other models are routed away, one success closes it", steps: []step{
			engConfigure([]ch{chA, chB, chC}, `"probes":false`),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			// One open model does not close off the provider.
			decide(request(1100, "a2", engChZ), out(vPass)),
			decide(request(1200, "a1", chA), out(vSwap(chB))),
			// The second open model of "mock" opens the provider breaker (model "*")
			// for as long as the longest of them.
			decide(requestErr(1300, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61300),
					fxTripped(fxCircuit(engProvMock, "closed", "open", "models-open", "", 61300), chB.model),
					fxFailoverHomeN("a1", chB, chC, "QUOTA", "quota", chA, 2),
					engFxWake(61300))), // its open time ends on a wake, probes or not
			// The provider breaker is persisted too (model "*"): restored, it is
			// taken as it is rather than derived again from its models.
			snapshot(health(
				hcFull(engProvMock, "open", 0, 0, 61300, "", 1300),
				hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000),
				hcFull(chB, "open", 1, 1, 61300, "QUOTA", 1300))),
			// A third model of the open provider: away to the other provider.
			decide(request(1400, "a3", engChZ), out(vSwap(chC))),
			// a2's request on Z (let through before the provider opened) fails
			// before the host: the provider is down, so it is not deferred; Z
			// opens, and the provider stays open as long as Z now.
			decide(requestErr(1500, "a2", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(engChZ, "closed", "open", "RATE_LIMIT", "transient", 61500),
					fxTripped(fxCircuit(engProvMock, "open", "open", "models-open", "", 61500), engChZ.model),
					fxFailover("a2", engChZ, chC, "RATE_LIMIT", "transient"),
					engFxWake(61500))),
			decide(request(61499, "a4", engChZ), out(vSwap(chC))),
			// Time up: Z's half-open probe goes through; its success closes Z and the provider.
			decide(request(61500, "a5", engChZ), out(vPass, fxCircuit(engChZ, "open", "half-open", "cooled-down", "", 0))),
			decide(settled(61600, "a5"), out(vPass,
				fxCircuit(engChZ, "half-open", "closed", "recovered", "", 0),
				fxCircuit(engProvMock, "open", "closed", "recovered", "", 0),
				engFxWake(0))), // nothing left to wake for
			decide(request(61700, "a6", engChZ), out(vPass)),
		}},
		{name: "provider breaker: restored open models open their provider too", steps: []step{
			engConfigure([]ch{chA, chB, chC}, `"probes":false`),
			step{export: "restore", in: restoreAt(1000, health(
				hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000),
				hcFull(chB, "open", 1, 1, 62000, "QUOTA", 1000))), want: restored(2, 2)},
			decide(request(2000, "a1", engChZ), out(vSwap(chC), engFxWake(62000))), // the derived provider's end
			decide(request(62000, "a2", engChZ), out(vPass)),                       // the provider's time is up
		}},

		// ---- growing cooldowns (TestCooldownGrowsWhileTheOutageLastsAndResetsOnClose)
		{name: "cooldown doubles with each re-open by a failed probe, capped by maxCooldownMs, and starts over after a close", steps: []step{
			engConfigure([]ch{chA, chB}, `"cooldownMs":1000`, `"maxCooldownMs":3000`),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 2000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"),
					engFxWake(2000))),
			// Re-open 1: 2000 ms.
			decide(engWake(11000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(611000))),
			decide(engProbeFail(11000, chA, code("QUOTA")), out(vPass, fxCircuit(chA, "half-open", "open", "QUOTA", "quota", 13000), engFxWake(13000))),
			// Re-open 2: 4000, capped at 3000.
			decide(engWake(21000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(621000))),
			decide(engProbeFail(21000, chA, code("QUOTA")), out(vPass, fxCircuit(chA, "half-open", "open", "QUOTA", "quota", 24000), engFxWake(24000))),
			// Re-opens 3 and 4: still the cap.
			decide(engWake(31000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(631000))),
			decide(engProbeFail(31000, chA, code("QUOTA")), out(vPass, fxCircuit(chA, "half-open", "open", "QUOTA", "quota", 34000), engFxWake(34000))),
			decide(engWake(41000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(641000))),
			decide(engProbeFail(41000, chA, code("QUOTA")), out(vPass, fxCircuit(chA, "half-open", "open", "QUOTA", "quota", 44000), engFxWake(44000))),
			snapshot(health(hcFull(chA, "open", 5, 5, 44000, "QUOTA", 41000))),
			// A successful probe closes A, resets its counts and cancels the wake.
			decide(engWake(51000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(651000))),
			decide(engProbeOK(51000, chA), out(vPass, fxCircuit(chA, "half-open", "closed", "recovered", "", 0), engFxWake(0))),
			snapshot(health(hcFull(chA, "closed", 0, 0, 44000, "QUOTA", 51000))),
			// The next open is the base cooldown again.
			decide(request(51000, "a2", chA), out(vPass)),
			decide(requestErr(51000, "a2", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 52000),
					fxFailover("a2", chA, chB, "QUOTA", "quota"),
					engFxWake(52000))),
		}},

		// ---- wakes and probes (TestWakeProbesDueChannelsOnce)
		{name: "wakes: scheduled at the open time, one probe per due channel, the slot excludes agents, a probe success closes", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB}, `"cooldownMs":5000`)),
			engOpenA(1000, 5000, chB, 6000),
			engOne(
				// Early (a timer can fire before its time): nothing is due, and the
				// wake is asked for again, since the timer that was to bring it fired.
				decide(engWake(3000), out(vPass, engFxWake(6000))),
				decide(engWake(6000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(606000))),
				// The slot is taken: no second probe; the lease's end is asked for again.
				decide(engWake(6000), out(vPass, engFxWake(606000))),
				decide(request(6100, "a2", chA), out(vSwap(chB))),
				// A half-open channel persists as open and due.
				snapshot(health(hcFull(chA, "open", 1, 1, 6000, "QUOTA", 6000))),
				decide(engProbeOK(6200, chA), out(vPass, fxCircuit(chA, "half-open", "closed", "recovered", "", 0), engFxWake(0))),
				decide(request(6300, "a3", chA), out(vPass)),
				// A stale wake with nothing open does nothing.
				decide(engWake(6400), out(vPass)),
			),
		)},
		{name: "wakes: every due channel gets one probe, in key order; a later open time does not move the wake", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB, chC}, `"cooldownMs":5000`, `"providerThreshold":0`)),
			engOpenA(1000, 5000, chB, 6000),
			engOne(
				decide(request(2000, "a2", chC), out(vPass)),
				// C opens until 7000; the next wake is still A's at 6000: no effect.
				decide(requestErr(2000, "a2", "alt", beforeHost, code("QUOTA"), "", 0),
					out(vRetry,
						fxCircuit(chC, "closed", "open", "QUOTA", "quota", 7000),
						fxFailover("a2", chC, chB, "QUOTA", "quota"))),
				// Late: both are due. alt/alt-c sorts before mock/mock-a.
				decide(engWake(8000), out(vPass,
					fxCircuit(chC, "open", "half-open", "cooled-down", "", 0), engFxProbe(chC),
					fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA),
					engFxWake(608000))),
				decide(engWake(8000), out(vPass, engFxWake(608000))),
				decide(engProbeOK(8100, chC), out(vPass, fxCircuit(chC, "half-open", "closed", "recovered", "", 0))),
				// A failed probe re-opens A for twice the cooldown.
				decide(engProbeFail(8200, chA, failure("RATE_LIMIT", "", 429, 0)),
					out(vPass, fxCircuit(chA, "half-open", "open", "RATE_LIMIT", "transient", 18200), engFxWake(18200))),
				// A probe result for a closed channel is ignored.
				decide(engProbeOK(8300, chC), out(vPass)),
			),
		)},
		{name: "wakes: a probe refused for its own sake (ABORTED) frees the slot and the next wake probes again", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB})),
			engOpenA(1000, 60000, chB, 61000),
			engOne(
				decide(engWake(61000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(661000))),
				// Permanent: no verdict on the channel, no transition; the slot is free, due now.
				decide(engProbeFail(61100, chA, failure("ABORTED", "The operation was aborted", 0, 0)), out(vPass, engFxWake(61100))),
				decide(engWake(61100), out(vPass, engFxProbe(chA), engFxWake(661100))),
				snapshot(health(hcFull(chA, "open", 1, 1, 61000, "QUOTA", 61000))),
				// A probe result for a channel that never failed is ignored.
				decide(engProbeOK(61200, chB), out(vPass)),
			),
		)},
		{name: "wakes: a lost probe's lease runs out and the next wake probes again", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB})),
			engOpenA(1000, 60000, chB, 61000),
			engOne(
				decide(engWake(61000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(661000))),
				decide(engWake(660999), out(vPass, engFxWake(661000))), // a millisecond early
				decide(engWake(661000), out(vPass, engFxProbe(chA), engFxWake(1261000))),
			),
		)},
		{name: "wakes: restored open channels are scheduled by the next step", steps: []step{
			engConfigure([]ch{chA, chB}),
			step{export: "restore", in: restoreAt(1000, health(hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000))), want: restored(1, 1)},
			decide(settled(2000, "nobody"), out(vPass, engFxWake(61000))),
			decide(engWake(61000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(661000))),
		}},
		{name: "probes off: no wakes are scheduled and a wake does nothing", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB}, `"probes":false`)),
			engOpenA(1000, 60000, chB, 0),
			engOne(decide(engWake(61000), out(vPass))),
		)},

		// ---- half-open through agents (policy/circuit_test.go)
		{name: "half-open: exactly one agent probes; its before-host failure re-opens at once; the lease frees the slot", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB}, engClassic(`"cooldownMs":10000`)...)),
			engOpenA(1000, 10000, chB, 0),
			engOne(
				decide(request(10999, "a2", chA), out(vSwap(chB))), // still cooling down
				decide(request(11000, "probe", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
				decide(request(11001, "x", chA), out(vSwap(chB))),
				decide(request(11002, "y", chA), out(vSwap(chB))),
				decide(request(11003, "z", chA), out(vSwap(chB))),
				// Not closed, so even a before-host rate limit counts: re-open, cooldown doubled.
				decide(requestErr(11100, "probe", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0),
					out(vRetry,
						fxCircuit(chA, "half-open", "open", "RATE_LIMIT", "transient", 31100),
						fxFailover("probe", chA, chB, "RATE_LIMIT", "transient"))),
				decide(request(31100, "next", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
				decide(request(631099, "late1", chA), out(vSwap(chB))),
				decide(request(631100, "late2", chA), out(vPass)), // next's lease ran out
				decide(settled(631200, "late2"), out(vPass, fxCircuit(chA, "half-open", "closed", "recovered", "", 0))),
				decide(request(631300, "late3", chA), out(vPass)),
			),
		)},

		// ---- the user's backup (TestUserChosenBackupComesBeforeTheChain)
		{name: "set-backup: the user's backup is tried before the chain; set-backup without a channel clears it", steps: []step{
			engConfigure([]ch{chA, chB, chC}, classic...),
			decide(engSetBackup(1000, chC), out(vPass)),
			decide(request(1100, "a1", chA), out(vPass)),
			decide(requestErr(1200, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61200),
					fxFailover("a1", chA, chC, "QUOTA", "quota"))),
			decide(request(1300, "a2", chA), out(vSwap(chC))),
			decide(engClearBackup(1400, false), out(vPass)),
			decide(request(1500, "a3", chA), out(vSwap(chB))),
			decide(engSetBackup(1600, chC), out(vPass)),
			decide(request(1700, "a4", chA), out(vSwap(chC))),
			decide(engClearBackup(1800, true), out(vPass)), // "channel":null clears it too
			decide(request(1900, "a5", chA), out(vSwap(chB))),
		}},

		// ---- recovery (TestSessionsReturnHomeOrStay)
		recoveryScenario("return", out(vSwap(chA), fxReturned("a1", chB, chA))),
		recoveryScenario("stay", out(vPass)),

		// ---- the cross-agent retry budget (TestRetryBudgetStopsAStormAcrossAgents)
		{name: "retry budget: after the floor of same-channel waits across agents, the next failure opens and fails over", steps: []step{
			engConfigure([]ch{chA, chC}, engClassic(`"failureThreshold":100`, `"retryBudgetPercent":0`, `"retryBudgetFloor":3`)...),
			decide(request(1000, "a", chA), out(vPass)),
			decide(requestErr(1000, "a", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("a", chA, 1, 0, "STREAM_CLOSED"))),
			decide(request(1100, "b", chA), out(vPass)),
			decide(requestErr(1100, "b", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("b", chA, 1, 0, "STREAM_CLOSED"))),
			decide(request(1200, "c", chA), out(vPass)),
			decide(requestErr(1200, "c", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("c", chA, 1, 0, "STREAM_CLOSED"))),
			decide(request(1300, "d", chA), out(vPass)),
			// Four failures, far below the threshold of 100, but the budget is spent.
			decide(requestErr(1300, "d", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "STREAM_CLOSED", "transient", 61300),
					fxFailover("d", chA, chC, "STREAM_CLOSED", "transient"))),
			snapshot(health(hcFull(chA, "open", 4, 1, 61300, "STREAM_CLOSED", 1300))),
			decide(request(1400, "e", chA), out(vSwap(chC))),
			// The budget is per provider: alt's is untouched.
			decide(requestErr(1500, "e", "alt", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("e", chC, 1, 0, "STREAM_CLOSED"))),
		}},
		{name: "retry budget: it scales with the requests sent (percent)", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"failureThreshold":100`, `"retryBudgetPercent":50`, `"retryBudgetFloor":0`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(request(1000, "a2", chA), out(vPass)),
			decide(request(1000, "a3", chA), out(vPass)),
			decide(request(1000, "a4", chA), out(vPass)),
			// 50% of 4 requests: two retries.
			decide(requestErr(1100, "a1", "mock", afterHost, code("SERVER"), "", 0), out(vWait(0), fxRetry("a1", chA, 1, 0, "SERVER"))),
			decide(requestErr(1100, "a2", "mock", afterHost, code("SERVER"), "", 0), out(vWait(0), fxRetry("a2", chA, 1, 0, "SERVER"))),
			decide(requestErr(1100, "a3", "mock", afterHost, code("SERVER"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "SERVER", "transient", 61100),
					fxFailover("a3", chA, chB, "SERVER", "transient"))),
			// A's breaker is open already: a4 fails over with nothing new to say about A.
			decide(requestErr(1100, "a4", "mock", afterHost, code("SERVER"), "", 0),
				out(vRetry, fxFailover("a4", chA, chB, "SERVER", "transient"))),
		}},
		{name: "retry budget: shared by the provider's channels, and refilled once its window has passed", steps: []step{
			engConfigure([]ch{chA, chB, chC}, engClassic(`"failureThreshold":100`, `"retryBudgetPercent":0`, `"retryBudgetFloor":1`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("a1", chA, 1, 0, "STREAM_CLOSED"))),
			// B is another channel of "mock": the one retry is gone.
			decide(request(1100, "a2", chB), out(vPass)),
			decide(requestErr(1100, "a2", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chB, "closed", "open", "STREAM_CLOSED", "transient", 61100),
					fxFailover("a2", chB, chA, "STREAM_CLOSED", "transient"))),
			// Seventy seconds on, the one-minute window has slid past both.
			decide(request(71000, "a3", chA), out(vPass)),
			decide(requestErr(71000, "a3", "mock", afterHost, code("STREAM_CLOSED"), hostRetryNormal, 0),
				out(vWait(0), fxRetry("a3", chA, 1, 0, "STREAM_CLOSED"))),
		}},

		// ---- give-up reasons (TestGiveUpReasons, TestFailoverBudgetStopsPingPong, TestUnroutedFailureIsLeftToTheHost)
		{name: "give-up no-routable-fallback: an empty chain observes and hands failures back", steps: []step{
			engConfigure(nil, classic...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vDelegate("no-routable-fallback"),
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxGiveUp("a1", chA, "no-routable-fallback", "QUOTA", fxTried(chA, "QUOTA")))),
			decide(request(1100, "a2", chA), out(vPass)), // nothing routable: let through
			decide(requestErr(1200, "a2", "mock", afterHost, code("SERVER"), "", 0),
				out(vDelegate("no-routable-fallback"), fxGiveUp("a2", chA, "no-routable-fallback", "SERVER", fxTried(chA, "SERVER")))),
		}},
		{name: "give-up recovery-timeout: waiting for the first channel back would outlast giveUpAfterMs", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"giveUpAfterMs":30000`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1100, "a1", chA), out(vSwap(chB))),
			// Both open for a minute; A is back first, at 61000: a wait that ends 60 s
			// after a1's first failure. The give-up names the failure that ended the
			// turn (B's) and lists every channel tried.
			decide(requestErr(1200, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vDelegate("recovery-timeout"),
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61200),
					fxGiveUpN("a1", chB, "recovery-timeout", "QUOTA", 1, fxTried(chA, "QUOTA"), fxTried(chB, "QUOTA")))),
		}},
		{name: "give-up recovery-timeout: a same-channel wait may end exactly at giveUpAfterMs, not a millisecond later", steps: []step{
			engConfigure([]ch{chA}, engClassic(`"giveUpAfterMs":45000`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, failure("RATE_LIMIT", "", 429, 45000), "", 0),
				out(vWait(45000), fxRetry("a1", chA, 1, 45000, "RATE_LIMIT"))),
			decide(request(46000, "a1", chA), out(vPass)),
			decide(requestErr(46000, "a1", "mock", afterHost, failure("RATE_LIMIT", "", 429, 1), "", 0),
				out(vDelegate("recovery-timeout"), fxGiveUp("a1", chA, "recovery-timeout", "RATE_LIMIT", fxTried(chA, "RATE_LIMIT")))),
			snapshot(health(hc(chA, "closed", 2, 0, "RATE_LIMIT"))),
		}},
		{name: "give-up horizon: a same-channel wait past giveUpAfterMs fails over while a fallback is routable (issue #17)", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"giveUpAfterMs":45000`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, failure("RATE_LIMIT", "", 429, 45000), "", 0),
				out(vWait(45000), fxRetry("a1", chA, 1, 45000, "RATE_LIMIT"))),
			decide(request(46000, "a1", chA), out(vPass)),
			decide(requestErr(46000, "a1", "mock", afterHost, failure("RATE_LIMIT", "", 429, 1), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "transient", 106000),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "transient"))),
			decide(request(46100, "a1", chA), out(vSwap(chB))),
		}},
		{name: "give-up budget-exhausted: maxFailovers without a success; a success resets it", steps: []step{
			engConfigure([]ch{chA, chB, chC}, engClassic(`"maxFailovers":1`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1100, "a1", chA), out(vSwap(chB))),
			// C is routable, but a1 has used its one failover.
			decide(requestErr(1200, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vDelegate("budget-exhausted"),
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61200),
					fxGiveUpN("a1", chB, "budget-exhausted", "QUOTA", 1, fxTried(chA, "QUOTA"), fxTried(chB, "QUOTA")))),
			// The user moves to C (its new home); a success there.
			decide(request(1300, "a1", chC), out(vPass, fxPick("a1", chC))),
			decide(settled(1400, "a1"), out(vPass)),
			decide(request(61400, "a1", chC), out(vPass)),
			// A has cooled down: a1 may fail over again.
			decide(requestErr(61500, "a1", "alt", beforeHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chC, "closed", "open", "QUOTA", "quota", 121500),
					fxFailover("a1", chC, chA, "QUOTA", "quota"))),
		}},
		{name: "give-up not-recoverable: permanent failures are handed back without blame, even from a probe", steps: engSteps(
			engOne(
				engConfigure([]ch{chA, chB}, classic...),
				decide(request(1000, "a0", chA), out(vPass)),
				decide(requestErr(1000, "a0", "mock", beforeHost, code("INVALID_REQUEST"), hostRetryNormal, 0), out(vDefer)),
				decide(requestErr(1000, "a0", "mock", afterHost, code("INVALID_REQUEST"), hostRetryNormal, 0),
					out(vDelegate("not-recoverable"), fxGiveUp("a0", chA, "not-recoverable", "INVALID_REQUEST", fxTried(chA, "INVALID_REQUEST")))),
				snapshot(health()),
			),
			engOpenA(1100, 60000, chB, 0),
			engOne(
				decide(request(61100, "p1", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
				// On a half-open channel nothing is deferred; a permanent failure frees the slot.
				decide(requestErr(61200, "p1", "mock", beforeHost, code("CONTEXT_WINDOW_EXCEEDED"), hostRetryNormal, 0),
					out(vDelegate("not-recoverable"), fxGiveUp("p1", chA, "not-recoverable", "CONTEXT_WINDOW_EXCEEDED", fxTried(chA, "CONTEXT_WINDOW_EXCEEDED")))),
				decide(request(61300, "p2", chA), out(vPass)),
			),
		)},
		{name: "give-up unknown-channel: a failure this instance did not route goes to the host", steps: []step{
			engConfigure([]ch{chA, chB}, classic...),
			decide(requestErr(1000, "ghost", "other", beforeHost, code("QUOTA"), "", 0), out(vDefer)),
			decide(requestErr(1000, "ghost", "other", afterHost, code("QUOTA"), "", 0),
				out(vDelegate("unknown-channel"), fxGiveUp("ghost", noModel("other"), "unknown-channel", "QUOTA"))),
			decide(request(1100, "a1", chA), out(vPass)),
			decide(requestErr(1200, "a1", "alt", beforeHost, code("SERVER"), hostRetryNormal, 0), out(vDefer)),
			decide(requestErr(1300, "a1", "alt", afterHost, code("SERVER"), hostRetryNormal, 0),
				out(vDelegate("unknown-channel"), fxGiveUp("a1", noModel("alt"), "unknown-channel", "SERVER"))),
			snapshot(health()),
		}},

		// ---- class overrides (TestClassOverrides)
		{name: "class overrides: CONTEXT_WINDOW_EXCEEDED as model-unavailable fails over at once", steps: []step{
			engConfigure([]ch{chA, chB}, engClassic(`"classes":[{"code":"CONTEXT_WINDOW_EXCEEDED","class":"model-unavailable"}]`)...),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("CONTEXT_WINDOW_EXCEEDED"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "CONTEXT_WINDOW_EXCEEDED", "model-unavailable", 61000),
					fxFailover("a1", chA, chB, "CONTEXT_WINDOW_EXCEEDED", "model-unavailable"))),
			decide(request(1100, "a1", chA), out(vSwap(chB))),
		}},
		{name: "class overrides: codes match case-insensitively and may make a transient code permanent", steps: []step{
			configure(
				configJSON([]ch{chA, chB}, engClassic(`"classes":[{"code":"context_window_exceeded","class":"model-unavailable"},{"code":"RATE_LIMIT","class":"permanent"}]`)...),
				resolved([]ch{chA, chB}, engClassic(`"classes":[{"code":"CONTEXT_WINDOW_EXCEEDED","class":"model-unavailable"},{"code":"RATE_LIMIT","class":"permanent"}]`)...)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("Context_Window_Exceeded"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "Context_Window_Exceeded", "model-unavailable", 61000),
					fxFailover("a1", chA, chB, "Context_Window_Exceeded", "model-unavailable"))),
			decide(request(1100, "a2", chB), out(vPass)),
			// Even after the host's budget for it is spent, RATE_LIMIT is now the caller's problem.
			decide(requestErr(1200, "a2", "mock", afterHost, failure("RATE_LIMIT", "", 429, 0), hostRetryNormal, 0),
				out(vDelegate("not-recoverable"), fxGiveUp("a2", chB, "not-recoverable", "RATE_LIMIT", fxTried(chB, "RATE_LIMIT")))),
			snapshot(health(hcFull(chA, "open", 1, 1, 61000, "Context_Window_Exceeded", 1000))),
			failsRaw("configure", configJSON(nil, `"classes":[{"code":"X","class":"fatal"}]`),
				`config key "classes[0].class": must be one of [transient quota model-unavailable permanent unknown], not "fatal"`),
		}},

		// ---- restore merging (TestMergeAdoptsOnlyNewerRecords)
		{name: "restore: the higher version wins whatever the clocks say, ties go to the open record, a bad record is skipped, the rest taken", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB, chC}, classic...)),
			engOpenA(1000, 60000, chB, 0),
			engOne(
				snapshot(health(hcV(chA, "open", 1, 1, 61000, "QUOTA", 1000, 1))),
				// Concurrent (same version) closes lose to the open, however late their clock.
				restore(health(hcV(chA, "closed", 0, 0, 0, "", 999, 1)), restored(1, 0)),
				restore(health(hcV(chA, "closed", 0, 0, 0, "", 999_999_999, 1)), restored(1, 0)),
				snapshot(health(hcV(chA, "open", 1, 1, 61000, "QUOTA", 1000, 1))),
				decide(request(1500, "a2", chA), out(vSwap(chB))),
				// Another host closed A after learning of the open: version 2,
				// even with its clock behind.
				step{export: "restore", in: restoreAt(1600, health(hcV(chA, "closed", 0, 0, 0, "QUOTA", 900, 2))), want: restored(1, 1)},
				snapshot(health(hcV(chA, "closed", 0, 0, 0, "QUOTA", 900, 2))), // a closed record keeps no open time
				decide(request(2000, "a3", chA), out(vPass)),
				// A mixed batch: A's record is older than ours, C's is news.
				step{export: "restore", in: restoreAt(1600, health(
					hcV(chA, "open", 2, 1, 90000, "SERVER", 500, 1),
					hcV(chC, "open", 1, 2, 95000, "QUOTA", 1500, 4))), want: restored(2, 1)},
				snapshot(health(
					hcV(chC, "open", 1, 2, 95000, "QUOTA", 1500, 4),
					hcV(chA, "closed", 0, 0, 0, "QUOTA", 900, 2))),
				// Bad records are skipped and named; the good one beside them is taken.
				restore(health(hcFull(chB, "closed", 2, 0, 0, "X", 5000), hcFull(ch{engProvMock.provider, ""}, "open", 0, 0, 0, "", 5000)),
					restoredSkipping(2, 1, `health "channels[1].channel": needs provider and model`)),
				step{export: "restore", raw: true,
					want: restoredSkipping(2, 0, `health "channels[1].state": must be one of [closed open half-open], not "ajar"`),
					in: restoreInput(health(hcFull(chB, "closed", 2, 0, 0, "X", 5000),
						`{"channel":{"provider":"x","model":"y"},"state":"ajar","failures":0,"openUntilMs":0,"lastCode":""}`))},
				snapshot(health(
					hcV(chC, "open", 1, 2, 95000, "QUOTA", 1500, 4),
					hcV(chA, "closed", 0, 0, 0, "QUOTA", 900, 2),
					hcV(chB, "closed", 2, 0, 0, "X", 0, 0))), // adopted at time 0: a change time is never later than now
				// The merged state decides: C is open, A closed, B untouched.
				decide(request(3000, "a4", chC), out(vSwap(chA))),
				decide(request(3100, "a5", chB), out(vPass)),
			),
		)},
	}
	return append(scs, effortScenarios()...)
}

// recoveryScenario: a1 fails over from A to B; once A is closed again by a
// probe and the host proposes B (a1's last request), "return" sends a1 home
// to A and "stay" keeps it on B.
func recoveryScenario(mode, want string) scenario {
	rec := fmt.Sprintf(`"recovery":%q`, mode)
	return scenario{name: "recovery " + mode + ": after the home channel recovers", steps: engSteps(
		engOne(engConfigure([]ch{chA, chB}, rec)),
		engOpenA(1000, 60000, chB, 61000),
		engOne(
			decide(request(1100, "a1", chA), out(vSwap(chB))),
			decide(settled(1200, "a1"), out(vPass)),
			decide(engWake(61000), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0), engFxProbe(chA), engFxWake(661000))),
			decide(engProbeOK(61100, chA), out(vPass, fxCircuit(chA, "half-open", "closed", "recovered", "", 0), engFxWake(0))),
			decide(request(61200, "a1", chB), want),
			// A new agent proposing B stays there in either mode: B is its home.
			decide(request(61300, "a2", chB), out(vPass)),
		),
	)}
}

// effortScenarios (TestReasoningEffortKeptOnlyWhereTheTargetListsIt): a swap
// keeps the proposed effort only when the host said the target lists it.
func effortScenarios() []scenario {
	cases := []struct {
		name  string
		info  []string // model-info events, sent before anything else
		drops bool
	}{
		{"listed", []string{engModelInfo(10, chB, true, "low", "high")}, false},
		{"not listed", []string{engModelInfo(10, chB, true, "low")}, true},
		{"listed in another case", []string{engModelInfo(10, chB, true, "HIGH")}, true},
		{"no reasoning", []string{engModelInfo(10, chB, true)}, true},
		{"unresolvable, whatever it lists", []string{engModelInfo(10, chB, false, "high")}, true},
		{"never told", nil, true},
		{"told about another channel only", []string{engModelInfo(10, chA, true, "high")}, true},
		{"a later model-info replaces the earlier", []string{engModelInfo(10, chB, true, "high"), engModelInfo(20, chB, true, "low")}, true},
		{"a later model-info adds the effort", []string{engModelInfo(10, chB, false), engModelInfo(20, chB, true, "high")}, false},
	}
	var scs []scenario
	for _, c := range cases {
		steps := []step{engConfigure([]ch{chA, chB}, classic...)}
		for _, in := range c.info {
			steps = append(steps, decide(in, out(vPass)))
		}
		steps = append(steps, engOpenA(1000, 60000, chB, 0)...)
		want := out(vSwap(chB))
		if c.drops {
			want = out(engVSwapDrop(chB), engFxEffortDropped("a1", chB, "high"))
		}
		steps = append(steps,
			decide(requestEffort(1100, "a1", chA, "high"), want),
			// A pass sends the proposed config unchanged: nothing to drop.
			decide(requestEffort(1200, "a2", chB, "high"), out(vPass)),
		)
		scs = append(scs, scenario{name: "reasoning effort: " + c.name, steps: steps})
	}
	return scs
}

func TestEngineScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, sc := range engineScenarios() {
		if seen[sc.name] || strings.TrimSpace(sc.name) == "" {
			t.Fatalf("scenario names must be unique and non-empty: %q", sc.name)
		}
		seen[sc.name] = true
	}
	runScenarios(t, engineScenarios())
}

// The engine scenarios through the wasm module and the native codec, byte for byte.
func TestEngineDifferential(t *testing.T) { differential(t, engineScenarios()) }
