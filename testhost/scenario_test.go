package testhost

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// scenario is a sequence of calls on fresh instances, with the expected answers
// derived from policy/requesterror.go. Defaults: failureThreshold 3, cooldownMs 60000,
// backoff 1000..30000, maxFailovers 4.
type scenario struct {
	name  string
	steps []step
}

const (
	maxRand = 1<<53 - 1
	halfway = 1 << 52
)

var cfgAB = configJSON([]ch{chA, chB}, classic...)

func scenarios() []scenario {
	return []scenario{
		{name: "request passes, host-spent rate limit opens and fails over, next request swaps, settle credits B", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			// After the host's retry plugin declined a code it covers, its budget is
			// spent: open at once, whatever the threshold, and fail over.
			decide(requestErr(2000, "a1", "mock", afterHost, failure("RATE_LIMIT", "429 Too Many Requests", 429, 0), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "transient", 62000),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "transient"))),
			decide(request(2100, "a1", chA), out(vSwap(chB))),
			decide(settled(2200, "a1"), out(vPass)),
			// Only what failed has a breaker: b's success on a clean breaker records nothing.
			snapshot(health(hcFull(chA, "open", 1, 1, 62000, "RATE_LIMIT", 2000))),
			decide(request(2300, "a2", chB), out(vPass)),
			decide(request(2400, "a3", chA), out(vSwap(chB))),
		}},
		{name: "before-host quota (HTTP_402 Insufficient Balance) fails over at once", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1500, "a1", "mock", beforeHost, failure("HTTP_402", "Insufficient Balance", 402, 0), hostRetryNormal, 12345),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "HTTP_402", "quota", 61500),
					fxFailover("a1", chA, chB, "HTTP_402", "quota"))),
			decide(request(1600, "a1", chA), out(vSwap(chB))),
		}},
		{name: "before-host QUOTA with a Retry-After beyond the cooldown", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", beforeHost, failure("QUOTA", "quota exceeded", 0, 120000), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 121000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(61000, "a2", chA), out(vSwap(chB))), // the cooldown alone would have ended
			decide(request(121000, "a3", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
		}},
		{name: "a 429 whose wording is a spent Chinese balance is quota, even before-host", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, failure("RATE_LIMIT", "您的账户余额不足，请充值后再试", 429, 0), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "quota", 61100),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "quota"))),
		}},
		{name: "before-host rate limit on a closed channel defers to the host, then after-host opens", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0), out(vDefer)),
			snapshot(health(hc(chA, "closed", 1, 0, "RATE_LIMIT"))), // counted towards the burst, below the threshold
			decide(requestErr(1200, "a1", "mock", afterHost, code("RATE_LIMIT"), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "transient", 61200),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "transient"))),
		}},
		{name: "transient failures the host does not cover wait with backoff until the threshold opens", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			// Attempt 1: ceiling min(30000, 1000) = 1000; rand 2^52 is half the range: floor(1001/2) = 500.
			decide(requestErr(1100, "a1", "mock", afterHost, failure("SERVER", "502 Bad Gateway", 502, 0),
				`{"mode":"normal","maxRetries":2,"retryableCodes":["RATE_LIMIT"]}`, halfway),
				out(vWait(500), fxRetry("a1", chA, 1, 500, "SERVER"))),
			// Attempt 2: ceiling 2000; the largest draw reaches it. A host policy that is not
			// "normal" covers nothing.
			decide(requestErr(1700, "a1", "mock", afterHost, code("SERVER"),
				`{"mode":"off","maxRetries":2,"retryableCodes":["SERVER"]}`, maxRand),
				out(vWait(2000), fxRetry("a1", chA, 2, 2000, "SERVER"))),
			snapshot(health(hc(chA, "closed", 2, 0, "SERVER"))),
			// The third consecutive failure reaches the threshold.
			decide(requestErr(3800, "a1", "mock", afterHost, code("SERVER"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "SERVER", "transient", 63800),
					fxFailover("a1", chA, chB, "SERVER", "transient"))),
		}},
		{name: "a provider Retry-After is a floor for the wait, even above the cap", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", afterHost, failure("RATE_LIMIT", "", 429, 45000), "", 0),
				out(vWait(45000), fxRetry("a1", chA, 1, 45000, "RATE_LIMIT"))),
		}},
		{name: "every channel open: wait for the first to come back, even the one that just failed", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", afterHost, failure("QUOTA", "quota exceeded", 0, 0), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61100),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1200, "a1", chA), out(vSwap(chB))),
			decide(requestErr(1300, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vWait(59800),
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61300),
					fxRetry("a1", chA, 1, 59800, "QUOTA"))),
			// Nothing routable: the proposed channel is let through rather than invented.
			decide(request(1400, "a2", chA), out(vPass)),
			// Before-host failures on an open channel are not deferred; a already
			// stays open long enough, and is still the first back.
			decide(requestErr(1500, "a2", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0),
				out(vWait(59600), fxRetry("a2", chA, 1, 59600, "RATE_LIMIT"))),
		}},
		{name: "no chain: the plugin observes and gives the failure back, never holding the turn", steps: []step{
			configure(configJSON(nil, classic...), resolvedDefaults()),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, code("QUOTA"), "", 0),
				out(vDelegate("no-routable-fallback"),
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61100),
					fxGiveUp("a1", chA, "no-routable-fallback", "QUOTA", fxTried(chA, "QUOTA")))),
		}},
		{name: "a permanent failure is deferred before-host and handed back after-host, not counted", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", beforeHost, failure("INVALID_REQUEST", "messages: field required", 400, 0), hostRetryNormal, 0),
				out(vDefer)),
			decide(requestErr(1200, "a1", "mock", afterHost, failure("INVALID_REQUEST", "messages: field required", 400, 0), hostRetryNormal, 0),
				out(vDelegate("not-recoverable"), fxGiveUp("a1", chA, "not-recoverable", "INVALID_REQUEST", fxTried(chA, "INVALID_REQUEST")))),
			snapshot(health()), // nothing was recorded against the channel
			decide(request(1300, "a1", chA), out(vPass)),
		}},
		{name: "cooldown expiry: half-open admits exactly one probe, its success closes the channel", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(2000, "a1", chA), out(vSwap(chB))),
			decide(settled(3000, "a1"), out(vPass)),
			decide(request(60999, "a1", chA), out(vSwap(chB))), // not yet
			decide(settled(60999, "a1"), out(vPass)),
			decide(request(61000, "a1", chA), out(vPass, fxReturned("a1", chB, chA), fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
			decide(request(61001, "a2", chA), out(vSwap(chB))), // the probe slot is taken
			decide(request(61002, "a3", chA), out(vSwap(chB))),
			snapshot(health( // a probe in flight is persisted as open-and-due
				hcFull(chA, "open", 1, 1, 61000, "QUOTA", 61000))),
			decide(settled(61500, "a1"), out(vPass, fxCircuit(chA, "half-open", "closed", "recovered", "", 0))),
			decide(request(61600, "a4", chA), out(vPass)),
			snapshot(health(hcFull(chA, "closed", 0, 0, 61000, "QUOTA", 61500))),
		}},
		{name: "cooldown expiry: a failed probe re-opens the channel", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(disposed(2000, "a1"), out(vPass)),
			decide(request(70000, "a2", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
			// A half-open channel is not closed: even a before-host rate limit counts.
			decide(requestErr(70100, "a2", "mock", beforeHost, code("RATE_LIMIT"), hostRetryNormal, 0),
				out(vRetry,
					// The second open in a row: the cooldown doubles to two minutes.
					fxCircuit(chA, "half-open", "open", "RATE_LIMIT", "transient", 190100),
					fxFailover("a2", chA, chB, "RATE_LIMIT", "transient"))),
			decide(request(70200, "a3", chA), out(vSwap(chB))),
		}},
		{name: "cooldown expiry: an error on a due channel moves it to half-open first", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(2000, "a1", chA), out(vSwap(chB))),
			decide(requestErr(62000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 122000),
					fxFailoverHomeN("a1", chB, chA, "QUOTA", "quota", chA, 2))),
		}},
		{name: "failover budget: a second failover without a success gives up", steps: []step{
			configure(configJSON([]ch{chA, chB, chC}, append([]string{`"maxFailovers":1`}, classic...)...), resolved([]ch{chA, chB, chC}, append([]string{`"maxFailovers":1`}, classic...)...)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1100, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61100),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1200, "a1", chA), out(vSwap(chB))),
			decide(requestErr(1300, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vDelegate("budget-exhausted"),
					fxCircuit(chB, "closed", "open", "QUOTA", "quota", 61300),
					fxGiveUpN("a1", chB, "budget-exhausted", "QUOTA", 1, fxTried(chA, "QUOTA"), fxTried(chB, "QUOTA")))),
			decide(request(1400, "a1", chA), out(vSwap(chC))),
			decide(request(1500, "a2", chB), out(vSwap(chC))),
		}},
		{name: "a request-error on another provider than the agent's last request is not guessed at", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1100, "a1", chA), out(vPass)),
			decide(requestErr(1200, "a1", "alt", afterHost, code("SERVER"), "", 0),
				out(vDelegate("unknown-channel"), fxGiveUp("a1", noModel("alt"), "unknown-channel", "SERVER"))),
			snapshot(health()),
		}},
		{name: "settled and disposed without a request, and unknown proposed channels", steps: []step{
			configure(configJSON(nil, classic...), resolvedDefaults()),
			decide(settled(1, "nobody"), out(vPass)),
			decide(disposed(2, "nobody"), out(vPass)),
			snapshot(health()),
			decide(requestEffort(3, "a1", chC, "high"), out(vPass)),
			decide(requestErr(4, "a1", "alt", afterHost, code("UNKNOWN_MODEL"), "", 0),
				out(vDelegate("no-routable-fallback"),
					fxCircuit(chC, "closed", "open", "UNKNOWN_MODEL", "model-unavailable", 60004),
					fxGiveUp("a1", chC, "no-routable-fallback", "UNKNOWN_MODEL", fxTried(chC, "UNKNOWN_MODEL")))),
		}},
		{name: "unicode, escapes and a large input pass through the kernel intact", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "代理-\"α\"\n\t\\", chA), out(vPass)),
			decide(requestErr(1100, "代理-\"α\"\n\t\\", "mock", afterHost,
				failure("RATE_LIMIT", strings.Repeat("速率限制 rate limited ", 40000)+"额度已用完", 429, 0), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "quota", 61100),
					fxFailover("代理-\"α\"\n\t\\", chA, chB, "RATE_LIMIT", "quota"))),
			decide(request(1200, strings.Repeat("x", 100000), chA), out(vSwap(chB))),
		}},
		{name: "snapshot and restore round trip between instances", steps: []step{
			configure(configJSON([]ch{chA, chB, chC}, classic...), resolvedDefaults(chA, chB, chC)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(1100, "a2", chC), out(vPass)),
			decide(requestErr(1200, "a2", "alt", afterHost, code("SERVER"), "", 0),
				out(vWait(0), fxRetry("a2", chC, 1, 0, "SERVER"))),
			decide(request(1250, "a1", chA), out(vSwap(chB))),
			decide(settled(1300, "a1"), out(vPass)),
			snapshot(roundTripHealth),

			{export: "restore", in: restoreInput(roundTripHealth), wantErr: "not configured", on: 1},
			{export: "configure", in: configJSON([]ch{chA, chB, chC}, classic...), want: resolvedDefaults(chA, chB, chC), on: 1},
			{export: "snapshot", want: health(), on: 1},
			{export: "restore", in: restoreAt(1000, roundTripHealth), want: restored(2, 2), on: 1},
			{export: "snapshot", want: roundTripHealth, on: 1},
			// A bad record is skipped and named; the good one beside it is
			// older than the local record, so nothing changes.
			{export: "restore", in: restoreInput(health(hcFull(chA, "closed", 9, 0, 99, "X", 0), `{"channel":{"provider":"x","model":"y"},"state":"ajar","failures":0,"openUntilMs":0,"lastCode":""}`)),
				want: restoredSkipping(2, 0, `health "channels[1].state": must be one of [closed open half-open], not "ajar"`), raw: true, on: 1},
			{export: "restore", in: restoreInput(health(hcFull(chA, "closed", 9, 0, 99, "X", 0), hc(ch{"x", ""}, "open", 0, 0, ""))),
				want: restoredSkipping(2, 0, `health "channels[1].channel": needs provider and model`), on: 1},
			{export: "snapshot", want: roundTripHealth, on: 1},
			// The restored state decides like the original.
			{export: "decide", in: request(2000, "a9", chA), want: out(vSwap(chB)), on: 1},
			{export: "decide", in: request(2100, "a8", chC), want: out(vPass), on: 1},
			{export: "decide", in: requestErr(2200, "a8", "alt", afterHost, code("SERVER"), "", 0),
				want: out(vWait(0), fxRetry("a8", chC, 1, 0, "SERVER")), on: 1}, // C's count was 1: now 2
			{export: "decide", in: requestErr(2300, "a8", "alt", afterHost, code("SERVER"), "", 0),
				want: out(vRetry,
					fxCircuit(chC, "closed", "open", "SERVER", "transient", 62300),
					fxFailover("a8", chC, chB, "SERVER", "transient")), on: 1},
			// A half-open restore is open-and-due; configure resets everything.
			{export: "restore", in: restoreInput(health(hc(chB, "half-open", 1, 500, "QUOTA"))), want: restored(1, 1), on: 1},
			{export: "decide", in: request(2400, "a7", chB), want: out(vPass, fxCircuit(chB, "open", "half-open", "cooled-down", "", 0)), on: 1},
			{export: "configure", in: cfgAB, want: resolvedDefaults(chA, chB), on: 1},
			{export: "snapshot", want: health(), on: 1},
		}},
		{name: "bad inputs are errors and the same instance keeps answering", steps: badInputSteps()},

		// Regressions for bugs found while building the test host.
		{name: "a reset time in the wording keeps a spent channel open until then, not for the cooldown", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1_893_456_000_000, "a1", chA), out(vPass)),
			decide(requestErr(1_893_456_000_000, "a1", "mock", beforeHost,
				failure("RATE_LIMIT", "已达到 Token Plan 用量上限，请在2小时后重试", 429, 0), hostRetryNormal, 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "RATE_LIMIT", "quota", 1_893_456_000_000+2*3_600_000),
					fxFailover("a1", chA, chB, "RATE_LIMIT", "quota"))),
		}},
		{name: "a failure on a request this instance never routed goes to the host, and no breaker is guessed", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(requestErr(1000, "ghost", "other", beforeHost, code("QUOTA"), "", 0), out(vDefer)),
			decide(requestErr(1000, "ghost", "other", afterHost, code("QUOTA"), "", 0),
				out(vDelegate("unknown-channel"), fxGiveUp("ghost", noModel("other"), "unknown-channel", "QUOTA"))),
			snapshot(health()),
		}},
		{name: "a disposed probe frees the half-open slot", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(61000, "a1", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
			decide(disposed(61100, "a1"), out(vPass)),
			decide(request(1_000_000_000, "a2", chA), out(vPass)),
		}},
		{name: "a cancelled probe frees the half-open slot", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
				out(vRetry,
					fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000),
					fxFailover("a1", chA, chB, "QUOTA", "quota"))),
			decide(request(61000, "a1", chA), out(vPass, fxCircuit(chA, "open", "half-open", "cooled-down", "", 0))),
			decide(requestErr(61100, "a1", "mock", afterHost, failure("ABORTED", "The operation was aborted", 0, 0), "", 0),
				out(vDelegate("not-recoverable"), fxGiveUpN("a1", chA, "not-recoverable", "ABORTED", 1, fxTried(chA, "QUOTA")))),
			decide(request(1_000_000_000, "a2", chA), out(vPass)),
		}},
		{name: "an empty event kind is an input error", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			{export: "decide", in: `{"nowMs":1,"event":{"kind":""}}`, wantErr: `input "event.kind"`, raw: true},
		}},
		{name: "an empty phase is an input error", steps: []step{
			configure(cfgAB, resolvedDefaults(chA, chB)),
			decide(request(1000, "a1", chA), out(vPass)),
			{export: "decide", in: `{"nowMs":1100,"event":{"kind":"request-error","agent":"a1","provider":"mock",` +
				`"failure":{"code":"RATE_LIMIT"},"phase":"","rand":0}}`, wantErr: `input "event.phase"`, raw: true},
		}},
	}
}

var roundTripHealth = health(
	hcFull(chC, "closed", 1, 0, 0, "SERVER", 0),
	hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000))

// badInputSteps sends malformed and invalid documents, each followed by a
// valid call whose answer shows the instance, and its state, survived: A is
// open, so a request proposing A is swapped to B.
func badInputSteps() []step {
	steps := []step{
		fails("decide", request(1, "a0", chA), "decide: not configured: call configure first"),
		fails("snapshot", "", "snapshot: not configured"),
		fails("restore", health(), "restore: not configured"),
		configure(cfgAB, resolvedDefaults(chA, chB)),
		decide(request(100, "q", chA), out(vPass)),
		decide(requestErr(100, "q", "mock", afterHost, code("QUOTA"), "", 0),
			out(vRetry, fxCircuit(chA, "closed", "open", "QUOTA", "quota", 60100), fxFailover("q", chA, chB, "QUOTA", "quota"))),
	}
	okHealth := health(hcFull(chA, "open", 1, 1, 60100, "QUOTA", 100))
	bad := []step{
		failsRaw("configure", "not json", "configure: input is not valid JSON"),
		failsRaw("configure", `{"chain":[{"provider":"mock","model":"mock-a"}`, "configure: input is not valid JSON"),
		failsRaw("configure", "", "configure: input is not valid JSON"),
		failsRaw("configure", `{"chain":[],"cooldwnMs":5}`, `config key "cooldwnMs": unknown key`),
		failsRaw("configure", `{"chain":[],"failureThreshold":"3"}`, `config key "failureThreshold": must be an integer`),
		failsRaw("configure", `{"chain":[{"provider":"mock","model":7}]}`, `config key "chain[0].model": must be a string`),
		failsRaw("configure", `{"chain":[],"cooldownMs":-1}`, `config key "cooldownMs": must be an integer`),
		fails("configure", configJSON([]ch{chA, chA}), `config key "chain[1]": duplicates chain[0] (mock/mock-a)`),
		fails("configure", configJSON(nil, `"failureThreshold":0`), `config key "failureThreshold": must be between 1 and 1000`),
		fails("configure", configJSON(nil, `"backoffBaseMs":5000`, `"backoffMaxMs":10`), `config key "backoffMaxMs"`),
		failsRaw("decide", "nope", "decide: input is not valid JSON"),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"request"`, "decide: input is not valid JSON"),
		failsRaw("decide", `[]`, `decide: input "(root)": must be an object`),
		failsRaw("decide", `{"nowMs":"1","event":{"kind":"settled","agent":"a"}}`, `input "nowMs": must be an integer`),
		failsRaw("decide", `{"nowMs":1.5,"event":{"kind":"settled","agent":"a"}}`, `input "nowMs": must be an integer`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"explode","agent":"a"}}`, `input "event.kind": unknown event kind "explode"`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"settled","agent":"a","extra":1}}`, `input "event.extra": unknown key`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"settled"}}`, `input "event.agent": is required`),
		failsRaw("decide", `{"nowMs":1,"event":"settled"}`, `input "event": must be an object`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"mock","failure":{"code":"X"},"phase":"after-host"}}`,
			`input "event.rand": is required`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"request-error","agent":"a","provider":"mock","failure":{"code":"X"},"phase":"during","rand":0}}`,
			`input "event.phase": must be one of [before-host after-host], not "during"`),
		failsRaw("decide", `{"nowMs":1,"event":{"kind":"request","agent":"a","proposed":{"provider":"mock"}}}`, `input "event.proposed.model": is required`),
		failsRaw("restore", `{"channels":[`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`]}`, `nests deeper than 32 levels`),
		failsRaw("restore", `{"channels":[`+strings.Repeat(`{},`, 10_000)+`{}]}`, `health "channels": more than 10000 records`),
		failsRaw("restore", `{"channels":{}}`, `health "channels": must be an array`),
		failsRaw("restore", `{"nowMs":-1,"channels":[]}`, `health "nowMs": must be an integer`),
		fails("decide", `{"nowMs":1,"event":{"kind":"set-backup","channel":{"provider":"","model":"m"}}}`,
			`input "event.channel.provider": must be a non-empty string`),
		fails("decide", `{"nowMs":1,"event":{"kind":"set-backup","channel":{"provider":"p","model":""}}}`,
			`input "event.channel.model": must be a non-empty string`),
	}
	for i, b := range bad {
		steps = append(steps, b,
			decide(request(int64(200+i), fmt.Sprintf("probe-%d", i), chA), out(vSwap(chB))),
			snapshot(okHealth))
		steps[len(steps)-2].note = "(after " + b.in + ")"
	}
	return steps
}

func TestScenarios(t *testing.T) { runScenarios(t, scenarios()) }

// 10^5 nested levels once overflowed the guest's stack: a trap, which cost the
// instance and, in the shim, the evidence. Now they are an ordinary error and
// the same instance keeps answering. (Outside the scenario tables: their WIT
// check walks each level with its path, which is quadratic here.)
func TestDeepNestingIsAnErrorNotATrap(t *testing.T) {
	in := newInstance(t)
	_, err := in.Call("configure", []byte(configJSON([]ch{chA, chB})))
	require.NoError(t, err)
	for export, doc := range map[string]string{
		"restore":   strings.Repeat(`{"channels":[`, 50_000) + strings.Repeat(`]}`, 50_000),
		"configure": strings.Repeat("[", 100_000),
		"decide":    `{"nowMs":1,"event":` + strings.Repeat(`{"a":`, 100_000) + `1` + strings.Repeat(`}`, 100_000) + `}`,
	} {
		_, err := in.Call(export, []byte(doc))
		var pe *PluginError
		require.ErrorAs(t, err, &pe, export)
		require.Contains(t, pe.Message, "nests deeper than 32 levels", export)
	}
	_, err = in.Call("snapshot", nil)
	require.NoError(t, err, "the same instance answers after refusing")
}

// runScenarios runs each scenario through the wasm module, every input and
// output checked against the WIT types.
func runScenarios(t *testing.T, scs []scenario) {
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			runSteps(t, sc.steps)
		})
	}
}

func jsonEqual(a, b string) bool {
	var x, y any
	if json.Unmarshal([]byte(a), &x) != nil || json.Unmarshal([]byte(b), &y) != nil {
		return false
	}
	return fmt.Sprint(x) == fmt.Sprint(y)
}

// Each classification reaches its verdict through the wasm module.
func TestScenarioClassification(t *testing.T) {
	cases := []struct {
		fail  string
		class string
	}{
		{failure("AUTH", "You have reached your usage cap", 403, 0), "quota"},
		{failure("AUTH", "invalid api key", 401, 0), "credential"},
		{failure("CONTEXT_WINDOW_EXCEEDED", "insufficient balance", 400, 0), "permanent"},
		{failure("rate_limit", "", 0, 0), "transient"},
		{failure("WEIRD", "", 404, 0), "model-unavailable"},
		{failure("WEIRD", "The model `x` does not exist", 0, 0), "model-unavailable"},
		{failure("WEIRD", "", 402, 0), "quota"},
		{failure("WEIRD", "", 503, 0), "transient"},
		{failure("WEIRD", "", 418, 0), "permanent"},
		{failure("WEIRD", "", 0, 0), "unknown"},
		{failure("SERVER", "模型不存在", 500, 0), "transient"},
		{failure("NO_ADAPTER", "", 0, 0), "model-unavailable"},
		{failure("HTTP_402", "", 0, 0), "quota"},
		{failure("TIMEOUT", "欠费停机", 0, 0), "quota"},
	}
	for _, c := range cases {
		t.Run(c.fail, func(t *testing.T) {
			var code string
			var f struct{ Code string }
			require.NoError(t, json.Unmarshal([]byte(c.fail), &f))
			code = f.Code
			var want string
			switch c.class {
			case "quota", "model-unavailable":
				want = out(vRetry, fxCircuit(chA, "closed", "open", code, c.class, 61000), fxFailover("a1", chA, chB, code, c.class))
			case "permanent":
				want = out(vDelegate("not-recoverable"), fxGiveUp("a1", chA, "not-recoverable", code, fxTried(chA, code)))
			case "credential":
				// A key is per provider: the provider opens with the channel, and a chain
				// of that provider's models alone has nowhere to go, so it is handed back.
				want = out(vDelegate("not-recoverable"),
					fxCircuit(chA, "closed", "open", code, "model-unavailable", 61000),
					fxTripped(fxCircuit(ch{chA.provider, "*"}, "closed", "open", code, "model-unavailable", 61000), chA.model),
					fxGiveUp("a1", chA, "not-recoverable", code, fxTried(chA, code)), engFxWake(61000))
			default:
				want = out(vWait(0), fxRetry("a1", chA, 1, 0, code))
			}
			runSteps(t, []step{
				configure(cfgAB, resolvedDefaults(chA, chB)),
				decide(request(1000, "a1", chA), out(vPass)),
				decide(requestErr(1000, "a1", "mock", afterHost, c.fail, "", 0), want),
			})
		})
	}
}

// Same-channel backoff stays within [0, min(max, base*2^(attempt-1))], with the
// verdict and the retry effect agreeing: the smallest draw waits 0, the
// largest the whole ceiling, random ones in between.
func TestScenarioBackoffBounds(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	draws := []uint64{0, maxRand, uint64(rng.Int63n(1 << 53)), uint64(rng.Int63n(1 << 53))}
	for _, r := range draws {
		t.Run(fmt.Sprint(r), func(t *testing.T) {
			steps := []step{
				// A large threshold and retry budget: only the backoff is under test.
				configure(configJSON([]ch{chA, chB}, append([]string{`"failureThreshold":1000`, `"retryBudgetFloor":1000`}, classic...)...),
					resolved([]ch{chA, chB}, append([]string{`"failureThreshold":1000`, `"retryBudgetFloor":1000`}, classic...)...)),
				decide(request(1000, "a1", chA), out(vPass)),
			}
			for attempt := 1; attempt <= 12; attempt++ {
				ceiling := min(int64(30000), int64(1000)<<(attempt-1))
				steps = append(steps, step{
					export: "decide",
					in:     requestErr(int64(2000+attempt), "a1", "mock", afterHost, code("TIMEOUT"), "", r),
					check: func(t *testing.T, got []byte) {
						var o struct {
							Verdict struct {
								Kind    string
								DelayMs int64
							}
							Effects []struct {
								Kind    string
								Attempt int
								DelayMs int64
							}
						}
						require.NoError(t, json.Unmarshal(got, &o))
						require.Equal(t, "wait", o.Verdict.Kind)
						require.Len(t, o.Effects, 1)
						require.Equal(t, "retry", o.Effects[0].Kind)
						require.Equal(t, attempt, o.Effects[0].Attempt)
						require.Equal(t, o.Verdict.DelayMs, o.Effects[0].DelayMs)
						require.GreaterOrEqual(t, o.Verdict.DelayMs, int64(0))
						require.LessOrEqual(t, o.Verdict.DelayMs, ceiling, "attempt %d", attempt)
						switch r {
						case 0:
							require.Zero(t, o.Verdict.DelayMs)
						case maxRand:
							require.Equal(t, ceiling, o.Verdict.DelayMs)
						}
					},
				})
			}
			runSteps(t, steps)
		})
	}
}

// TestColdPassScenarios: the snapshot says whether the next process may send
// a new session's first request before its module is up (policy/coldpass.go),
// and a snapshot passed back with the flag restores as one without it.
func TestColdPassScenarios(t *testing.T) {
	cold := func(entries ...string) string {
		return strings.TrimSuffix(health(entries...), "}") + `,"coldPass":true}`
	}
	runSteps(t, []step{
		configure(configJSON([]ch{chA, chB}, classic...), resolvedDefaults(chA, chB)),
		snapshot(cold()),
		decide(request(1000, "a1", chA), out(vPass)),
		decide(requestErr(1000, "a1", "mock", afterHost, code("QUOTA"), "", 0),
			out(vRetry, fxCircuit(chA, "closed", "open", "QUOTA", "quota", 61000), fxFailover("a1", chA, chB, "QUOTA", "quota"))),
		// An open channel: the next process's module would route away from it.
		snapshot(health(hcFull(chA, "open", 1, 1, 61000, "QUOTA", 1000))),
		{export: "configure", in: configJSON([]ch{chA, chB}, classic...), want: resolvedDefaults(chA, chB), on: 1},
		{export: "restore", in: restoreAt(70000, cold(hcFull(chB, "closed", 0, 0, 0, "", 500))), want: restored(1, 1), on: 1},
		{export: "snapshot", want: cold(hcFull(chB, "closed", 0, 0, 0, "", 500)), on: 1},
	})
}
