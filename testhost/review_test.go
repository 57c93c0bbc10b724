package testhost

import (
	"fmt"
	"testing"
)

// The state bugs found in review, through the wasm module (every input and
// output checked against the WIT) and, byte for byte, natively. Each failed
// before its fix; policy/review_test.go pins the same rules natively.
func reviewScenarios() []scenario {
	slashX, slashY := ch{"a/b", "c"}, ch{"a", "b/c"}
	const week = 7 * 24 * 3600 * 1000
	return []scenario{
		{name: "channel identity: {a/b, c} and {a, b/c} are two channels", steps: []step{
			configure(configJSON([]ch{slashX, slashY, chC}), resolved([]ch{slashX, slashY, chC})),
			decide(request(1000, "a1", slashX), out(vPass)),
			decide(requestErr(1000, "a1", "a/b", beforeHost, code("QUOTA"), "", 0), out(vRetry,
				fxCircuit(slashX, "closed", "open", "QUOTA", "quota", 61000),
				fxFailover("a1", slashX, slashY, "QUOTA", "quota"),
				`{"kind":"schedule-wake","atMs":61000}`)),
			decide(request(1100, "a1", slashX), out(vSwap(slashY))),
			snapshot(health(hcFull(slashX, "open", 1, 1, 61000, "QUOTA", 1000))),
		}},
		{name: "provider breaker: its open time ends on the wake, probes off; then a transient failure of another model is the host's to retry", steps: []step{
			engConfigure([]ch{chA, chB, engChZ, chC}, `"probes":false`),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0), out(vRetry,
				fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
				fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1000, "a1", chA), out(vSwap(chB))),
			decide(requestErr(1000, "a1", "mock", beforeHost, code("QUOTA"), "", 0), out(vRetry,
				fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61000),
				fxTripped(fxCircuit(engProvMock, "closed", "open", "models-open", "", 61000), chB.model),
				fxFailoverHomeN("a1", chB, chC, "QUOTA", "quota", chA, 2),
				engFxWake(61000))),
			decide(wake(61000), out(vPass,
				fxCircuit(engProvMock, "open", "half-open", "cooled-down", "", 0))),
			decide(request(601000, "a2", engChZ), out(vPass)),
			decide(requestErr(601000, "a2", "mock", beforeHost, code("SERVER"), hostRetryNormal, 0), out(vDefer)),
		}},
		{name: "restore: records are judged at the caller's time; long-expired ones do not open their provider", steps: []step{
			engConfigure([]ch{chA, chB, engChZ, chC}, `"probes":false`),
			{export: "restore", in: restoreAt(601000, health(
				hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000),
				hcFull(chB, "open", 1, 1, 61000, "QUOTA", 1000))), want: restored(2, 2)},
			decide(request(601000, "a2", engChZ), out(vPass)),
			decide(requestErr(601000, "a2", "mock", beforeHost, code("SERVER"), hostRetryNormal, 0), out(vDefer)),
		}},
		{name: "retry-after: every stated wait is capped at a week", steps: []step{
			engConfigure([]ch{chA, chB}, `"probes":false`, `"giveUpAfterMs":604800000`),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, failure("QUOTA", "", 429, 1<<53), "", 0), out(vRetry,
				fxCircuit(chA, "closed", "open", "QUOTA", "quota", 1000+week),
				fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(2000, "a2", chB), out(vPass)),
			decide(requestErr(2000, "a2", "mock", afterHost, failure("SERVER", "", 500, 1<<50), "", 0), out(vWait(week),
				fmt.Sprintf(`{"kind":"retry","agent":"a2","channel":%s,"attempt":1,"delayMs":%d,"code":"SERVER"}`, chB.json(), week))),
		}},
	}
}

// busyAgentScenario: an agent whose failure was deferred to the host's
// retries outlives 5000 agents that come and go (more than the table keeps
// idle): its after-host failure still knows its channel and fails over,
// rather than going back to the host as unknown-channel.
func busyAgentScenario() scenario {
	steps := []step{
		engConfigure([]ch{chA, chB}, `"probes":false`),
		decide(request(1000, "busy", chA), out(vPass)),
		decide(requestErr(1000, "busy", "mock", beforeHost, code("SERVER"), hostRetryNormal, 0), out(vDefer)),
	}
	for i := range 5000 {
		id := fmt.Sprint("passer-", i)
		steps = append(steps, decide(request(int64(1001+i), id, chA), out(vPass)), decide(settled(int64(1001+i), id), out(vPass)))
	}
	steps = append(steps, decide(requestErr(7000, "busy", "mock", afterHost, code("SERVER"), hostRetryNormal, 0), out(vRetry,
		fxCircuit(chA, "closed", "open", "SERVER", "transient", 67000),
		fxFailover("busy", chA, chB, "SERVER", "transient"))))
	return scenario{name: "agent table: a busy agent outlives thousands of others", steps: steps}
}

func TestReviewScenarios(t *testing.T) {
	runScenarios(t, append(reviewScenarios(), busyAgentScenario()))
}

func TestReviewDifferential(t *testing.T) {
	differential(t, append(reviewScenarios(), busyAgentScenario()))
}
