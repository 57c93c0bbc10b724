package testhost

import (
	"fmt"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/stretchr/testify/require"
)

// Tool-call retry through the wasm module: every input and output is checked
// against the WIT by runSteps, and every step is also run natively and must
// answer byte for byte the same.

// toolsDefault is the resolved `tools` object under the defaults
// (policy/toolretry.go): nothing declared, 500..8000 ms, 3 attempts, 120 s.
const toolsDefault = `{"retry":[],"backoffMs":500,"maxBackoffMs":8000,"maxAttempts":3,"retryDeadlineMs":120000}`

// The scenarios' tools row: two names and a prefix, plus the `.*` an operator
// used to regular expressions might write, which must match nothing.
const (
	toolsRow      = `"tools":{"retry":["web_fetch","db_*",".*"],"backoffMs":500,"maxBackoffMs":2000,"retryDeadlineMs":30000}`
	toolsResolved = `"tools":{"retry":["web_fetch","db_*",".*"],"backoffMs":500,"maxBackoffMs":2000,"maxAttempts":3,"retryDeadlineMs":30000}`
)

var (
	cfgTools      = configJSON([]ch{chA, chB}, append([]string{toolsRow}, classic...)...)
	resolvedTools = resolved([]ch{chA, chB}, append([]string{toolsResolved}, classic...)...)
)

// toolResult builds a tool-result event; agent "" and fail "" are omitted.
func toolResult(now int64, agent, call, tool string, attempt int, fail string, rand uint64) string {
	s := `{"nowMs":` + fmt.Sprint(now) + `,"event":{"kind":"tool-result"`
	if agent != "" {
		s += `,"agent":` + js(agent)
	}
	s += fmt.Sprintf(`,"call":%s,"tool":%s,"attempt":%d`, js(call), js(tool), attempt)
	if fail != "" {
		s += `,"failure":` + fail
	}
	return s + fmt.Sprintf(`,"rand":%d}}`, rand)
}

// toolFail is a tool-failure; code "" is omitted.
func toolFail(code, message string) string {
	if code == "" {
		return `{"message":` + js(message) + `}`
	}
	return `{"code":` + js(code) + `,"message":` + js(message) + `}`
}

func vToolRetry(attempt int, delay, deadline int64) string {
	return fmt.Sprintf(`{"kind":"tool-retry","attempt":%d,"delayMs":%d,"deadlineMs":%d}`, attempt, delay, deadline)
}

// vToolReturn is a tool-return verdict; note "" is omitted.
func vToolReturn(outcome string, attempts int, note string) string {
	s := fmt.Sprintf(`{"kind":"tool-return","outcome":%q,"attempts":%d`, outcome, attempts)
	if note != "" {
		s += `,"note":` + js(note)
	}
	return s + "}"
}

// fxTool is a tool-retry effect; agent "" and reason "" are omitted.
func fxTool(agent, call, tool string, attempt int, outcome, reason string, delay int64) string {
	s := `{"kind":"tool-retry"`
	if agent != "" {
		s += `,"agent":` + js(agent)
	}
	s += fmt.Sprintf(`,"call":%s,"tool":%s,"attempt":%d,"outcome":%q`, js(call), js(tool), attempt, outcome)
	if reason != "" {
		s += fmt.Sprintf(`,"reason":%q`, reason)
	}
	return s + fmt.Sprintf(`,"delayMs":%d}`, delay)
}

func exhaustedNote(attempts int, cause string) string {
	return fmt.Sprintf("[dsh-resilience] failed after %d attempts (last failure: %s); not retried further.", attempts, cause)
}

func toolScenarios() []scenario {
	reset := toolFail("", "read ECONNRESET")
	return []scenario{
		{name: "two socket resets are repeated with doubling, jittered backoff; the third attempt succeeds", steps: []step{
			configure(cfgTools, resolvedTools),
			// Retry 1: ceiling 500, equal jitter: the lowest draw waits half of it.
			decide(toolResult(1000, "a1", "call_1", "web_fetch", 1, reset, 0),
				out(vToolRetry(2, 250, 30000), fxTool("a1", "call_1", "web_fetch", 1, "retry", "socket", 250))),
			// Retry 2: ceiling 1000; the highest draw waits all of it.
			decide(toolResult(1300, "a1", "call_1", "web_fetch", 2, toolFail("", "socket hang up"), maxRand),
				out(vToolRetry(3, 1000, 30000), fxTool("a1", "call_1", "web_fetch", 2, "retry", "socket", 1000))),
			// The success is returned as it is, and reported because it took repeats.
			decide(toolResult(2400, "a1", "call_1", "web_fetch", 3, "", halfway),
				out(vToolReturn("succeeded", 3, ""), fxTool("a1", "call_1", "web_fetch", 3, "succeeded", "", 0))),
			snapshot(health()), // a tool call is no channel's business
		}},
		{name: "a prefix-declared tool runs out of attempts: the last failure is returned with a note", steps: []step{
			configure(cfgTools, resolvedTools),
			// A 503 in the text, the middle draw: 250 + half of 250.
			decide(toolResult(1000, "", "c9", "db_query", 1, toolFail("WEB_PROVIDER_ERROR", "DeepSeek API error (HTTP 503)"), halfway),
				out(vToolRetry(2, 375, 30000), fxTool("", "c9", "db_query", 1, "retry", "server", 375))),
			decide(toolResult(1500, "", "c9", "db_query", 2, toolFail("", "请求过于频繁，请稍后再试"), 0),
				out(vToolRetry(3, 500, 30000), fxTool("", "c9", "db_query", 2, "retry", "rate-limit", 500))),
			decide(toolResult(32000, "", "c9", "db_query", 3, toolFail("TOOL_TIMEOUT", "tool call timed out after 30000ms"), 0),
				out(vToolReturn("attempts-exhausted", 3, exhaustedNote(3, "timeout")),
					fxTool("", "c9", "db_query", 3, "attempts-exhausted", "timeout", 0))),
		}},
		{name: "a repeat's deadline is the tool's own timeout when that is shorter", steps: []step{
			configure(cfgTools, resolvedTools),
			decide(`{"nowMs":1,"event":{"kind":"tool-result","call":"c","tool":"web_fetch","attempt":1,"failure":{"code":"TOOL_TIMEOUT","message":"tool call timed out after 5000ms"},"timeoutMs":5000,"rand":0}}`,
				out(vToolRetry(2, 250, 5000), fxTool("", "c", "web_fetch", 1, "retry", "timeout", 250))),
			decide(`{"nowMs":2,"event":{"kind":"tool-result","call":"c","tool":"web_fetch","attempt":1,"failure":{"message":"socket hang up"},"timeoutMs":600000,"rand":0}}`,
				out(vToolRetry(2, 250, 30000), fxTool("", "c", "web_fetch", 1, "retry", "socket", 250))),
		}},
		{name: "the backoff is capped at maxBackoffMs", steps: []step{
			configure(configJSON(nil, `"tools":{"retry":["web_fetch"],"maxAttempts":10,"maxBackoffMs":2000}`),
				resolved(nil, `"tools":{"retry":["web_fetch"],"backoffMs":500,"maxBackoffMs":2000,"maxAttempts":10,"retryDeadlineMs":120000}`)),
			decide(toolResult(1, "a", "c", "web_fetch", 3, reset, maxRand), out(vToolRetry(4, 2000, 120000), fxTool("a", "c", "web_fetch", 3, "retry", "socket", 2000))),
			decide(toolResult(2, "a", "c", "web_fetch", 4, reset, maxRand), out(vToolRetry(5, 2000, 120000), fxTool("a", "c", "web_fetch", 4, "retry", "socket", 2000))),
			decide(toolResult(3, "a", "c", "web_fetch", 9, reset, 0), out(vToolRetry(10, 1000, 120000), fxTool("a", "c", "web_fetch", 9, "retry", "socket", 1000))),
		}},
		{name: "undeclared tools are never repeated: not bash, and `.*` matches nothing", steps: []step{
			configure(cfgTools, resolvedTools),
			decide(toolResult(1000, "a1", "c1", "bash", 1, reset, 0), out(vToolReturn("not-declared", 1, ""))),
			decide(toolResult(1000, "a1", "c2", "web_search", 1, toolFail("", "fetch failed"), 0), out(vToolReturn("not-declared", 1, ""))),
			decide(toolResult(1000, "a1", "c3", "db", 1, reset, 0), out(vToolReturn("not-declared", 1, ""))), // "db_*" needs the underscore
			decide(toolResult(1000, "a1", "c4", "bash", 1, "", 0), out(vToolReturn("succeeded", 1, ""))),
		}},
		{name: "failures that would recur are returned at once, in English and Chinese", steps: []step{
			configure(cfgTools, resolvedTools),
			decide(toolResult(1, "a1", "c1", "web_fetch", 1, toolFail("INVALID_ARGS", "invalid arguments: /url: required"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			decide(toolResult(2, "a1", "c2", "web_fetch", 1, toolFail("", "EACCES: permission denied, open '/srv/timeout.log'"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			decide(toolResult(3, "a1", "c3", "db_read", 1, toolFail("", "ENOENT: no such file or directory"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			decide(toolResult(4, "a1", "c4", "db_read", 1, toolFail("", "HTTP 429: 积分不足"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			decide(toolResult(5, "a1", "c5", "db_read", 1, toolFail("", "没有权限，请稍后再试"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			decide(toolResult(6, "a1", "c6", "web_fetch", 1, toolFail("", "query returned no rows"), 0),
				out(vToolReturn("not-transient", 1, ""))),
			// A repeat that then fails for good is returned with the note, and reported.
			decide(toolResult(7, "a1", "c7", "web_fetch", 2, toolFail("INVALID_TOOL_OUTPUT", "bad output"), 0),
				out(vToolReturn("not-transient", 2, exhaustedNote(2, "permanent")), fxTool("a1", "c7", "web_fetch", 2, "not-transient", "permanent", 0))),
		}},
		{name: "without a tools key nothing is repeated", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(toolResult(1, "a1", "c1", "web_fetch", 1, reset, 0), out(vToolReturn("not-declared", 1, ""))),
		}},
		{name: "tool events leave the model-request engine's state alone", steps: []step{
			configure(cfgTools, resolvedTools),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(toolResult(1100, "a1", "c1", "web_fetch", 1, toolFail("", "HTTP 500"), 0),
				out(vToolRetry(2, 250, 30000), fxTool("a1", "c1", "web_fetch", 1, "retry", "server", 250))),
			decide(toolResult(1200, "a1", "c1", "web_fetch", 3, toolFail("", "HTTP 500"), 0),
				out(vToolReturn("attempts-exhausted", 3, exhaustedNote(3, "server")), fxTool("a1", "c1", "web_fetch", 3, "attempts-exhausted", "server", 0))),
			snapshot(health()),
			// The model request is still in flight on A, and its failure is handled as ever.
			decide(requestErr(1300, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0), out(vDefer)),
		}},
		{name: "bad tools config and tool events are errors naming the key, and the instance keeps answering", steps: []step{
			failsRaw("configure", `{"tools":{"retries":["web_fetch"]}}`, `config key "tools.retries": unknown key`),
			failsRaw("configure", `{"tools":{"retry":"web_fetch"}}`, `config key "tools.retry": must be an array`),
			failsRaw("configure", `{"tools":{"retry":[7]}}`, `config key "tools.retry[0]": must be a string`),
			failsRaw("configure", `{"tools":{"maxAttempts":"3"}}`, `config key "tools.maxAttempts": must be an integer`),
			failsRaw("configure", `{"tools":[]}`, `config key "tools": must be an object`),
			fails("configure", `{"tools":{"maxAttempts":0}}`, `config key "tools.maxAttempts": must be between 1 (no repeats) and 100`),
			fails("configure", `{"tools":{"retry":["web_fetch","*"]}}`, `config key "tools.retry[1]": a bare * would repeat every tool`),
			fails("configure", `{"tools":{"retry":["web.*_docs"]}}`, `config key "tools.retry[0]": "web.*_docs": a * may only end a pattern`),
			fails("configure", `{"tools":{"backoffMs":5000,"maxBackoffMs":10}}`, `config key "tools.maxBackoffMs"`),
			fails("configure", `{"tools":{"retryDeadlineMs":0}}`, `config key "tools.retryDeadlineMs"`),
			configure(cfgTools, resolvedTools),
			fails("decide", toolResult(1, "a", "c", "web_fetch", 0, reset, 0), `input "event.attempt": must be at least 1`),
			failsRaw("decide", `{"nowMs":1,"event":{"kind":"tool-result","tool":"web_fetch","attempt":1,"rand":0}}`, `input "event.call": is required`),
			failsRaw("decide", `{"nowMs":1,"event":{"kind":"tool-result","call":"c","tool":"web_fetch","attempt":1,"failure":{"code":"X"},"rand":0}}`,
				`input "event.failure.message": is required`),
			failsRaw("decide", `{"nowMs":1,"event":{"kind":"tool-result","call":"c","tool":"web_fetch","attempt":1,"output":"secret","rand":0}}`,
				`input "event.output": unknown key`),
			decide(toolResult(1, "a", "c", "web_fetch", 1, reset, 0), out(vToolRetry(2, 250, 30000), fxTool("a", "c", "web_fetch", 1, "retry", "socket", 250))),
		}},
	}
}

func TestToolRetryScenarios(t *testing.T) { runScenarios(t, toolScenarios()) }

// The wasm build and the native codec answer every step byte for byte the same.
func TestToolRetryDifferential(t *testing.T) { differential(t, toolScenarios()) }

// Go owns the outcome and cause lists; the WIT enums mirror them, in order.
func TestToolEnumsMatchWIT(t *testing.T) {
	names := func(def string) []string {
		d := contract.Types[def]
		require.NotNil(t, d, "no WIT type %s", def)
		var out []string
		for _, c := range d.Cases {
			out = append(out, c.Name)
		}
		return out
	}
	var outcomes, causes []string
	for _, o := range policy.ToolOutcomes() {
		outcomes = append(outcomes, string(o))
	}
	for _, c := range policy.ToolCauses() {
		causes = append(causes, string(c))
	}
	require.Equal(t, outcomes, names("tool-outcome"))
	require.Equal(t, causes, names("tool-cause"))
}
