package testhost

import (
	"fmt"
	"testing"
)

// slowDefault is configure's echo of the default slow-call breaker (policy/slow.go): off.
const slowDefault = `{"firstTokenMs":0,"minCalls":3,"moveRunning":false}`

// The slow-call breaker through the wasm module, every step checked against
// the WIT and against the native codec byte for byte.

// firstTokenCheck is the stream check the shim sends at a call's first chunk, ms after it opened.
func firstTokenCheck(now int64, c ch, ms int64) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"stream-check","channel":%s,"openedMs":%d,"chunks":1,"lastChunkMs":%d,"cancelled":false,"firstTokenMs":%d}}`,
		now, c.json(), now-ms, now, ms)
}

// fxSlow is a slow effect; agent "" and first < 0 are omitted.
func fxSlow(c ch, from, to, agent string, first, estimate, limit int64, calls int) string {
	s := fmt.Sprintf(`{"kind":"slow","channel":%s,"from":%q,"to":%q`, c.json(), from, to)
	if agent != "" {
		s += `,"agent":` + js(agent)
	}
	if first >= 0 {
		s += fmt.Sprintf(`,"firstTokenMs":%d`, first)
	}
	return s + fmt.Sprintf(`,"estimateMs":%d,"limitMs":%d,"calls":%d}`, estimate, limit, calls)
}

func slowScenarios() []scenario {
	const t0 = 1_000_000
	row := configJSON([]ch{chA, chB}, `"providerThreshold":0`, `"slow":{"firstTokenMs":5000,"minCalls":2}`)
	idle := func(now int64) string { return vWatch(now + 90_000) } // the stall's idle bound after the first chunk
	return []scenario{
		{name: "two slow first tokens make the primary slow: a new session starts on the fallback; after the cooldown one probes it and a fast token closes it", steps: []step{
			configure(row, resolved([]ch{chA, chB}, `"providerThreshold":0`, `"slow":{"firstTokenMs":5000,"minCalls":2,"moveRunning":false}`)),
			decide(request(t0, "old", chA), out(vPass)),
			decide(firstTokenCheck(t0, chA, 20_000), out(idle(t0))),
			decide(firstTokenCheck(t0, chA, 20_000), out(idle(t0), fxSlow(chA, "closed", "slow", "", 20_000, 20_000, 5000, 2))),
			decide(request(t0, "new", chA), out(vSwap(chB))),
			decide(request(t0, "old", chA), out(vPass)), // a running session stays
			snapshot(`{"channels":[` + hcV(chA, "closed", 0, 0, 0, "", 0, 0) + `],"slow":[{"channel":` + chA.json() + `,"state":"slow","firstTokenMs":20000,"untilMs":1060000}]}`),
			decide(request(t0+60_000, "probe", chA), out(vPass, fxSlow(chA, "slow", "half-open", "probe", -1, 20_000, 5000, 2))),
			decide(request(t0+60_000, "other", chA), out(vSwap(chB))),
			decide(firstTokenCheck(t0+61_000, chA, 300), out(idle(t0+61_000), fxSlow(chA, "half-open", "closed", "", 300, 15_075, 5000, 0))),
			decide(request(t0+61_000, "after", chA), out(vPass)),
			// A snapshot's slow list passed back to restore is taken without complaint, and ignored.
			restore(`{"channels":[],"slow":[{"channel":`+chA.json()+`,"state":"slow","firstTokenMs":20000}]}`, restored(0, 0)),
		}},
		{name: "the breaker on, the stall bounds off: the first chunk is still watched for", steps: []step{
			configureOnly(configJSON([]ch{chA}, `"stall":{"firstChunkMs":0,"idleMs":0}`, `"slow":{"firstTokenMs":5000}`)),
			decide(opening(t0, "", t0), out(vWatch(0))),
			decide(opening(t0, "compaction", t0), out(vPass)),
		}},
		{name: "slow config and sample errors name the key", steps: []step{
			configureOnly(row),
			fails("configure", configJSON(nil, `"slow":{"firstTokenMs":50}`), `config key "slow.firstTokenMs": must be 0 (off) or between 100 and 86400000`),
			fails("configure", configJSON(nil, `"slow":{"minCalls":0}`), `config key "slow.minCalls": must be between 1 and 1000`),
			failsRaw("configure", configJSON(nil, `"slow":{"firstTokenMS":5000}`), `config key "slow.firstTokenMS": unknown key`),
			failsRaw("configure", configJSON(nil, `"slow":{"moveRunning":"yes"}`), `config key "slow.moveRunning": must be a boolean`),
			fails("decide", fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"stream-check","channel":%s,"openedMs":1,"chunks":0,"cancelled":false,"firstTokenMs":5}}`, t0, chA.json()),
				`input "event.firstTokenMs": is only sent once chunks is above 0`),
			decide(request(t0, "a", chA), out(vPass)),
		}},
	}
}

func TestSlowScenarios(t *testing.T) { runScenarios(t, slowScenarios()) }
