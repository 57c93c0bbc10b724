package testhost

import (
	"fmt"
	"testing"
)

// stallDefault is configure's echo of the default stall limits (policy/stall.go).
const stallDefault = `{"firstChunkMs":180000,"idleMs":90000,"purposes":{"compaction":{"firstChunkMs":180000,"idleMs":90000},"sessionTitle":{"firstChunkMs":180000,"idleMs":90000}},"tripOnCut":true}`

// The stall watchdog through the wasm module: every input and output of these
// steps is checked against the WIT (runStep), and each step answers byte for
// byte what the native codec answers.

var route = ch{"deepseek-official", "deepseek-v4-flash"}

// streamCheck builds a stream-check event; purpose "" and lastChunk < 0 are omitted.
func streamCheck(now int64, c ch, purpose string, opened, chunks, lastChunk int64, cancelled bool) string {
	ev := fmt.Sprintf(`"kind":"stream-check","channel":%s,"openedMs":%d,"chunks":%d,"cancelled":%t`, c.json(), opened, chunks, cancelled)
	if purpose != "" {
		ev += `,"purpose":` + js(purpose)
	}
	if lastChunk >= 0 {
		ev += fmt.Sprintf(`,"lastChunkMs":%d`, lastChunk)
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{%s}}`, now, ev)
}

// opening is a check of a call with no chunk yet.
func opening(now int64, purpose string, opened int64) string {
	return streamCheck(now, route, purpose, opened, 0, -1, false)
}

func vWatch(at int64) string {
	if at == 0 {
		return `{"kind":"watch"}`
	}
	return fmt.Sprintf(`{"kind":"watch","atMs":%d}`, at)
}

func vCut(message string) string {
	return fmt.Sprintf(`{"kind":"cut","code":"TIMEOUT","message":%s}`, js(message))
}

// fxStall is a stall effect; purpose "" is omitted.
func fxStall(c ch, purpose, bound string, silence, limit, chunks int64) string {
	p := ""
	if purpose != "" {
		p = `,"purpose":` + js(purpose)
	}
	return fmt.Sprintf(`{"kind":"stall","channel":%s%s,"bound":%q,"silenceMs":%d,"limitMs":%d,"chunks":%d}`,
		c.json(), p, bound, silence, limit, chunks)
}

// configureOnly configures without pinning the resolved echo (the stall
// limits are not echoed; the rest of it belongs to the engine's scenarios).
func configureOnly(in string) step { return step{export: "configure", in: in} }

func stallScenarios() []scenario {
	// These scenarios are about limits: the trip a cut causes has its own (stallTripScenarios).
	tight := configJSON([]ch{chA, chB}, `"stall":{"tripOnCut":false,"firstChunkMs":2000,"idleMs":1500,`+
		`"purposes":{"compaction":{"firstChunkMs":60000},"sessionTitle":{"firstChunkMs":0,"idleMs":500}}}`)
	return []scenario{
		{name: "defaults: a hung call is cut three minutes after it opened, a silent one ninety seconds after its last chunk", steps: []step{
			configureOnly(configJSON([]ch{chA, chB}, `"stall":{"tripOnCut":false}`)),
			decide(opening(10_000, "", 10_000), out(vWatch(190_000))),
			decide(opening(190_000, "", 10_000), out(vCut("no output for 180 s since the request was sent (dsh-resilience stall.firstChunkMs is 180000)"),
				fxStall(route, "", "first-chunk", 180_000, 180_000, 0))),
			// Another call: its first chunk moves the deadline to the idle bound.
			decide(streamCheck(20_000, route, "", 15_000, 1, 20_000, false), out(vWatch(110_000))),
			decide(streamCheck(110_000, route, "", 15_000, 57, 25_000, false), out(vWatch(115_000))),
			decide(streamCheck(115_200, route, "", 15_000, 57, 25_000, false), out(vCut("no output for 90 s after 57 chunks (dsh-resilience stall.idleMs is 90000)"),
				fxStall(route, "", "idle", 90_200, 90_000, 57))),
		}},
		{name: "configured limits, per purpose, with a purpose's absent limit taken from the row", steps: []step{
			configureOnly(tight),
			decide(opening(1000, "", 1000), out(vWatch(3000))),
			decide(opening(3000, "", 1000), out(vCut("no output for 2.0 s since the request was sent (dsh-resilience stall.firstChunkMs is 2000)"),
				fxStall(route, "", "first-chunk", 2000, 2000, 0))),
			// Compaction: its own first-chunk bound, the row's idle bound.
			decide(opening(3000, "compaction", 1000), out(vWatch(61_000))),
			decide(streamCheck(62_000, route, "compaction", 1000, 4, 60_000, false), out(vCut("no output for 2.0 s after 4 chunks (dsh-resilience stall.purposes.compaction.idleMs is 1500)"),
				fxStall(route, "compaction", "idle", 2000, 1500, 4))),
			// Session title: nothing bounds its first chunk, so it is watched for the idle bound only.
			decide(opening(1_000_000, "session-title", 1000), out(vWatch(0))),
			decide(streamCheck(1_000_500, route, "session-title", 1000, 1, 1_000_000, false), out(vCut("no output for 0.5 s after 1 chunk (dsh-resilience stall.purposes.sessionTitle.idleMs is 500)"),
				fxStall(route, "session-title", "idle", 500, 500, 1))),
		}},
		{name: "a slow but steady stream is never cut, however long the whole answer takes", steps: func() []step {
			steps := []step{configureOnly(tight)}
			// A chunk every second for ten minutes: each check finds the last chunk a second old.
			for n := int64(1); n <= 600; n += 97 {
				last := 1000 + n*1000
				steps = append(steps, decide(streamCheck(last+1000, route, "", 1000, n, last, false), out(vWatch(last+1500))))
			}
			return steps
		}()},
		{name: "the caller's own abort is a cancel, never a stall", steps: []step{
			configureOnly(tight),
			decide(streamCheck(1_000_000, route, "", 1000, 0, -1, true), out(vPass)),
			decide(streamCheck(1_000_000, route, "", 1000, 9, 2000, true), out(vPass)),
		}},
		{name: "both bounds off: nothing is watched", steps: []step{
			configureOnly(configJSON([]ch{chA}, `"stall":{"firstChunkMs":0,"idleMs":0}`)),
			decide(opening(1_000_000, "", 1000), out(vPass)),
			decide(opening(1_000_000, "compaction", 1000), out(vPass)),
			decide(streamCheck(1_000_000, route, "", 1000, 3, 2000, false), out(vPass)),
			// Purposes can switch themselves back on.
			configureOnly(configJSON([]ch{chA}, `"stall":{"firstChunkMs":0,"idleMs":0,"purposes":{"compaction":{"idleMs":30000}}}`)),
			decide(opening(1000, "compaction", 1000), out(vWatch(0))),
			decide(opening(1000, "", 1000), out(vPass)),
		}},
		{name: "stall config errors name the key, and the instance keeps its config", steps: []step{
			configureOnly(tight),
			fails("configure", configJSON(nil, `"stall":{"idleMs":50}`), `config key "stall.idleMs": must be 0 (off) or between 100 and 86400000`),
			fails("configure", configJSON(nil, `"stall":{"purposes":{"compaction":{"firstChunkMs":99}}}`),
				`config key "stall.purposes.compaction.firstChunkMs": must be 0 (off) or between 100`),
			failsRaw("configure", configJSON(nil, `"stall":{"idelMs":5000}`), `config key "stall.idelMs": unknown key`),
			failsRaw("configure", configJSON(nil, `"stall":{"purposes":{"session-title":{}}}`), `config key "stall.purposes.session-title": unknown key`),
			failsRaw("configure", configJSON(nil, `"stall":{"purposes":{"sessionTitle":{"idleMs":"30s"}}}`),
				`config key "stall.purposes.sessionTitle.idleMs": must be an integer`),
			failsRaw("configure", configJSON(nil, `"stall":90000`), `config key "stall": must be an object`),
			failsRaw("configure", configJSON(nil, `"stall":{"firstChunkMs":-1}`), `config key "stall.firstChunkMs": must be an integer`),
			decide(opening(1000, "", 1000), out(vWatch(3000))),
		}},
		{name: "malformed stream checks are input errors", steps: []step{
			configureOnly(tight),
			fails("decide", streamCheck(5000, route, "", 1000, 2, -1, false), `input "event.lastChunkMs": is required once chunks is above 0`),
			failsRaw("decide", `{"nowMs":5000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"m"},"openedMs":1,"chunks":0}}`,
				`input "event.cancelled": is required`),
			failsRaw("decide", `{"nowMs":5000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"m"},"openedMs":1,"chunks":0,"cancelled":"no"}}`,
				`input "event.cancelled": must be a boolean`),
			failsRaw("decide", `{"nowMs":5000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"m"},"openedMs":1,"chunks":0,"cancelled":false,"session":"a1"}}`,
				`input "event.session": unknown key`),
			decide(opening(1000, "", 1000), out(vWatch(3000))),
		}},
	}
}

func TestStallScenarios(t *testing.T) { runScenarios(t, stallScenarios()) }

// The same steps through the wasm module and the native codec, byte for byte.
func TestStallDifferential(t *testing.T) { differential(t, stallScenarios()) }
