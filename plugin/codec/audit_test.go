package codec

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

var (
	chA   = policy.Channel{Provider: "deepseek", Model: "flash"}
	chB   = policy.Channel{Provider: "tokenplan", Model: "secondary"}
	chOdd = policy.Channel{Provider: "a/b", Model: "c\"d\n"} // a slash, a quote, a control byte
)

// auditCase is one effect, the record the audit log gets for it (without
// `at`), and its log line: the contract of docs/audit.md, which the shim
// writes as given (parsed and written again by JSON.stringify, so a control
// byte's \u000a comes out as JavaScript writes it, \n).
type auditCase struct {
	name     string
	fx       policy.Effect
	record   string // "" for an effect not audited
	level    string
	text     string
	hostTurn bool
}

var auditCases = []auditCase{
	{name: "circuit open", fx: policy.CircuitChanged{Channel: chOdd, From: policy.Closed, To: policy.Open, Cause: "QUOTA", Class: policy.ClassQuota, OpenUntilMs: 1777629603120},
		record: `{"type":"circuit-open","channel":{"provider":"a/b","model":"c\"d\u000a"},"from":"closed","cause":"QUOTA","class":"quota","openUntil":"2026-05-01T10:00:03.120Z"}`,
		level:  "info", text: "circuit a/b/c\"d\n: closed -> open (QUOTA)"},
	{name: "circuit open beyond a JavaScript date", fx: policy.CircuitChanged{Channel: chA, From: policy.Closed, To: policy.Open, Cause: "QUOTA", OpenUntilMs: 8.64e15 + 1},
		record: `{"type":"circuit-open","channel":{"provider":"deepseek","model":"flash"},"from":"closed","cause":"QUOTA"}`,
		level:  "info", text: "circuit deepseek/flash: closed -> open (QUOTA)"},
	{name: "circuit open in year 275760", fx: policy.CircuitChanged{Channel: chA, From: policy.Closed, To: policy.Open, Cause: "SERVER", OpenUntilMs: 8.64e15},
		record: `{"type":"circuit-open","channel":{"provider":"deepseek","model":"flash"},"from":"closed","cause":"SERVER","openUntil":"+275760-09-13T00:00:00.000Z"}`,
		level:  "info", text: "circuit deepseek/flash: closed -> open (SERVER)"},
	{name: "circuit half-open", fx: policy.CircuitChanged{Channel: chA, From: policy.Open, To: policy.HalfOpen, Cause: "cooled-down"},
		record: `{"type":"circuit-half-open","channel":{"provider":"deepseek","model":"flash"},"from":"open","cause":"cooled-down"}`,
		level:  "info", text: "circuit deepseek/flash: open -> half-open (cooled-down)"},
	{name: "circuit closed", fx: policy.CircuitChanged{Channel: policy.Channel{Provider: "deepseek", Model: "*"}, From: policy.HalfOpen, To: policy.Closed, Cause: "recovered"},
		record: `{"type":"circuit-closed","channel":{"provider":"deepseek","model":"*"},"from":"half-open","cause":"recovered"}`,
		level:  "info", text: "circuit deepseek/*: half-open -> closed (recovered)"},
	{name: "probe", fx: policy.Probe{Channel: chA},
		record: `{"type":"probe","channel":{"provider":"deepseek","model":"flash"}}`},
	{name: "effort dropped", fx: policy.EffortDropped{Agent: "a1", Channel: chB, Effort: "max"},
		record: `{"type":"effort-dropped","agent":"a1","channel":{"provider":"tokenplan","model":"secondary"},"effort":"max"}`,
		level:  "info", text: "dropping reasoningEffort max: tokenplan/secondary does not list it"},
	{name: "failover, the first", fx: policy.FailedOver{Agent: "a1", From: chA, To: chB, Code: "RATE_LIMIT", Class: policy.ClassTransient, Home: chA},
		record: `{"type":"failover","agent":"a1","from":{"provider":"deepseek","model":"flash"},"to":{"provider":"tokenplan","model":"secondary"},"code":"RATE_LIMIT","class":"transient"}`,
		level:  "info", text: "failover deepseek/flash -> tokenplan/secondary on RATE_LIMIT (transient)", hostTurn: true},
	{name: "failover 2 of max", fx: policy.FailedOver{Agent: "a1", From: chB, To: chA, Code: "SERVER", Class: policy.ClassTransient, Failovers: 2},
		record: `{"type":"failover","agent":"a1","from":{"provider":"tokenplan","model":"secondary"},"to":{"provider":"deepseek","model":"flash"},"code":"SERVER","class":"transient","failovers":2,"maxFailovers":4}`,
		level:  "info", text: "failover tokenplan/secondary -> deepseek/flash on SERVER (transient)", hostTurn: true},
	{name: "returned", fx: policy.Returned{Agent: "a1", From: chB, To: chOdd},
		record: `{"type":"return","agent":"a1","from":"tokenplan/secondary","to":"a/b/c\"d\u000a"}`,
		level:  "info", text: "return tokenplan/secondary -> a/b/c\"d\n"},
	{name: "session pick and home", fx: policy.SessionRoute{Agent: "a1", Home: chA, Pick: chB},
		record: `{"type":"session-pick","agent":"a1","pick":{"provider":"tokenplan","model":"secondary"},"home":{"provider":"deepseek","model":"flash"}}`},
	{name: "session pick cleared", fx: policy.SessionRoute{Agent: "a1"},
		record: `{"type":"session-pick","agent":"a1"}`},
	{name: "retry", fx: policy.Retrying{Agent: "a1", Channel: chA, Attempt: 2, DelayMs: 1500, Code: "SERVER"},
		record: `{"type":"retry","agent":"a1","channel":{"provider":"deepseek","model":"flash"},"attempt":2,"delayMs":1500,"code":"SERVER"}`,
		level:  "info", text: "retry deepseek/flash #2 in 1500 ms on SERVER"},
	{name: "give-up, tried two", fx: policy.GaveUp{Agent: "a1", Channel: chB, Reason: policy.BudgetExhausted, Code: "RATE_LIMIT", Failovers: 4,
		Tried: []policy.Tried{{Channel: chA, Code: "RATE_LIMIT"}, {Channel: chB, Code: "SERVER"}}},
		record: `{"type":"give-up","agent":"a1","channel":{"provider":"tokenplan","model":"secondary"},"reason":"budget-exhausted","code":"RATE_LIMIT","tried":[{"channel":{"provider":"deepseek","model":"flash"},"code":"RATE_LIMIT"},{"channel":{"provider":"tokenplan","model":"secondary"},"code":"SERVER"}],"failovers":4,"maxFailovers":4}`,
		level:  "info", text: "give up on tokenplan/secondary: budget-exhausted (RATE_LIMIT); tried deepseek/flash (RATE_LIMIT), tokenplan/secondary (SERVER)", hostTurn: true},
	{name: "give-up, nothing known", fx: policy.GaveUp{Agent: "a2", Channel: chA, Reason: policy.NoRoutableFallback, Code: "QUOTA"},
		record: `{"type":"give-up","agent":"a2","channel":{"provider":"deepseek","model":"flash"},"reason":"no-routable-fallback","code":"QUOTA"}`,
		level:  "info", text: "give up on deepseek/flash: no-routable-fallback (QUOTA)", hostTurn: true},
	{name: "spill", fx: policy.Spilled{Agent: "a1", From: chA, To: chB, Code: "SERVER", Failures: 2},
		record: `{"type":"spill","agent":"a1","from":{"provider":"deepseek","model":"flash"},"to":{"provider":"tokenplan","model":"secondary"},"code":"SERVER","failures":2}`,
		level:  "info", text: "spill deepseek/flash -> tokenplan/secondary after 2 failures (SERVER)"},
	{name: "skipped too small", fx: policy.SkippedTooSmall{Agent: "a1", Channel: chB, ContextTokens: 300000, ContextWindow: 128000, Usable: 120000},
		record: `{"type":"skipped-too-small","agent":"a1","channel":{"provider":"tokenplan","model":"secondary"},"contextTokens":300000,"contextWindow":128000,"usable":120000}`,
		level:  "info", text: "tokenplan/secondary skipped for a1: 300000 context tokens, window 128000 (120000 usable)"},
	{name: "wait cut", fx: policy.WaitCut{Agent: "a1", Channel: chA},
		record: `{"type":"wait-cut","agent":"a1","channel":{"provider":"deepseek","model":"flash"}}`,
		level:  "info", text: "wait of a1 cut: deepseek/flash is usable again"},
	{name: "unroutable", fx: policy.Unroutable{Channel: chB, Keys: []string{"chain[2]", "backup"}, Code: "NO_ADAPTER"},
		record: `{"type":"unroutable","keys":["chain[2]","backup"],"channel":{"provider":"tokenplan","model":"secondary"},"code":"NO_ADAPTER"}`,
		level:  "warn", text: "dsh-resilience: chain[2], backup (tokenplan/secondary) cannot be served by this host (NO_ADAPTER): it is never failed over to"},
	{name: "unroutable, no key names it", fx: policy.Unroutable{Channel: chB, Code: "UNKNOWN_MODEL"},
		record: `{"type":"unroutable","keys":[],"channel":{"provider":"tokenplan","model":"secondary"},"code":"UNKNOWN_MODEL"}`,
		level:  "warn", text: "dsh-resilience: a target (tokenplan/secondary) cannot be served by this host (UNKNOWN_MODEL): it is never failed over to"},
	{name: "routable", fx: policy.Routable{Channel: chB, Keys: []string{"backup"}},
		record: `{"type":"routable","keys":["backup"],"channel":{"provider":"tokenplan","model":"secondary"}}`,
		level:  "info", text: "backup (tokenplan/secondary) can be served again"},
	{name: "stall", fx: policy.Stalled{Channel: chA, Bound: policy.FirstChunk, SilenceMs: 2004, LimitMs: 2000},
		record: `{"type":"stall","route":{"provider":"deepseek","model":"flash"},"bound":"first-chunk","silenceMs":2004,"limitMs":2000,"chunks":0}`,
		level:  "info", text: "stalled stream cut on deepseek/flash: no output for 2004 ms (first-chunk limit 2000 ms)"},
	{name: "stall of a compaction", fx: policy.Stalled{Channel: chA, Purpose: "compaction", Bound: policy.Idle, SilenceMs: 9000, LimitMs: 8000, Chunks: 2},
		record: `{"type":"stall","route":{"provider":"deepseek","model":"flash"},"purpose":"compaction","bound":"idle","silenceMs":9000,"limitMs":8000,"chunks":2}`,
		level:  "info", text: "stalled stream cut on deepseek/flash: no output for 9000 ms (idle limit 8000 ms)"},
	{name: "hedge won", fx: policy.Hedged{Agent: "a1", From: chA, To: chB, AfterMs: 2000, Reason: "hedge.afterMs", Winner: policy.WinnerHedge, FirstTokenMs: 2900, LoserWaitMs: 2900, SavedMs: 17100},
		record: `{"type":"hedge","agent":"a1","from":{"provider":"deepseek","model":"flash"},"to":{"provider":"tokenplan","model":"secondary"},"afterMs":2000,"reason":"hedge.afterMs","winner":"hedge","firstTokenMs":2900,"loserWaitMs":2900,"savedMs":17100}`,
		level:  "info", text: "hedge deepseek/flash -> tokenplan/secondary after 2000 ms: hedge won (loser waited 2900 ms)"},
	{name: "hedge with no winner", fx: policy.Hedged{Agent: "a1", From: chA, To: chB, AfterMs: 2000, Reason: "hedge.afterMs", Winner: policy.WinnerNone, End: "cut", LoserWaitMs: 4000, SavedMs: -1},
		record: `{"type":"hedge","agent":"a1","from":{"provider":"deepseek","model":"flash"},"to":{"provider":"tokenplan","model":"secondary"},"afterMs":2000,"reason":"hedge.afterMs","winner":"none","end":"cut","loserWaitMs":4000}`,
		level:  "info", text: "hedge deepseek/flash -> tokenplan/secondary after 2000 ms: no winner, cut (loser waited 4000 ms)"},
	{name: "slow", fx: policy.SlowChanged{Channel: chA, From: policy.NotSlow, To: policy.Slow, FirstTokenMs: 4200, EstimateMs: 3900, LimitMs: 3000, Calls: 3},
		record: `{"type":"slow","channel":{"provider":"deepseek","model":"flash"},"from":"closed","firstTokenMs":4200,"estimateMs":3900,"limitMs":3000,"calls":3}`,
		level:  "info", text: "slow-call breaker deepseek/flash: closed -> slow (first token 4200 ms, estimate 3900 ms, limit 3000 ms)"},
	{name: "slow probe", fx: policy.SlowChanged{Channel: chA, From: policy.Slow, To: policy.SlowHalfOpen, Agent: "s9", EstimateMs: 3900, LimitMs: 3000},
		record: `{"type":"slow-probe","channel":{"provider":"deepseek","model":"flash"},"from":"slow","agent":"s9","estimateMs":3900,"limitMs":3000,"calls":0}`,
		level:  "info", text: "slow-call breaker deepseek/flash: slow -> half-open (first token - ms, estimate 3900 ms, limit 3000 ms)"},
	{name: "slow closed", fx: policy.SlowChanged{Channel: chA, From: policy.SlowHalfOpen, To: policy.NotSlow, FirstTokenMs: 800, EstimateMs: 2000, LimitMs: 3000},
		record: `{"type":"slow-closed","channel":{"provider":"deepseek","model":"flash"},"from":"half-open","firstTokenMs":800,"estimateMs":2000,"limitMs":3000,"calls":0}`,
		level:  "info", text: "slow-call breaker deepseek/flash: half-open -> closed (first token 800 ms, estimate 2000 ms, limit 3000 ms)"},
	{name: "tool retry", fx: policy.ToolRetried{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 1, Outcome: policy.ToolRetry, Cause: "server", DelayMs: 500},
		record: `{"type":"tool-retry","tool":"web_fetch","call":"c1","agent":"a1","attempt":1,"reason":"server","delayMs":500}`,
		level:  "info", text: "tool web_fetch (c1): retry after attempt 1 (server)"},
	{name: "tool exhausted", fx: policy.ToolRetried{Call: "c1", Tool: "web_fetch", Attempt: 3, Outcome: policy.ToolAttemptsExhausted, Cause: "timeout"},
		record: `{"type":"tool-exhausted","tool":"web_fetch","call":"c1","attempt":3,"reason":"timeout","delayMs":0}`,
		level:  "info", text: "tool web_fetch (c1): attempts-exhausted after attempt 3 (timeout)"},
	{name: "tool recovered", fx: policy.ToolRetried{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 2, Outcome: policy.ToolSucceeded},
		record: `{"type":"tool-recovered","tool":"web_fetch","call":"c1","agent":"a1","attempt":2,"delayMs":0}`,
		level:  "info", text: "tool web_fetch (c1): succeeded after attempt 2 (ok)"},
	{name: "tool failed for good", fx: policy.ToolRetried{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 2, Outcome: policy.ToolNotTransient, Cause: "permanent"},
		record: `{"type":"tool-failed","tool":"web_fetch","call":"c1","agent":"a1","attempt":2,"reason":"permanent","delayMs":0}`,
		level:  "info", text: "tool web_fetch (c1): not-transient after attempt 2 (permanent)"},
	{name: "quota wait entered", fx: policy.QuotaWait{Agent: "a1", Phase: policy.WaitEntered, Provider: "tokenplan", Pool: "plans", EnteredAtMs: 1, Attempts: 1, NextAttemptAtMs: 1777629603120},
		record: `{"type":"quota-wait-entered","agent":"a1","provider":"tokenplan","pool":"plans","attempts":1,"nextAttemptAt":"2026-05-01T10:00:03.120Z"}`,
		level:  "info", text: "quota wait entered for a1 on tokenplan (1 attempts)"},
	{name: "quota wait waiting", fx: policy.QuotaWait{Agent: "a1", Phase: policy.WaitWaiting, Provider: "tokenplan", Attempts: 2},
		record: `{"type":"quota-wait-waiting","agent":"a1","provider":"tokenplan","attempts":2,"nextAttemptAt":"1970-01-01T00:00:00.000Z"}`,
		level:  "info", text: "quota wait waiting for a1 on tokenplan (2 attempts)"},
	{name: "quota wait left", fx: policy.QuotaWait{Agent: "a1", Phase: policy.WaitLeft, Reason: policy.LeftRecovered, Provider: "tokenplan", Pool: "plans", Attempts: 3, NextAttemptAtMs: 1777629603120},
		record: `{"type":"quota-wait-left","agent":"a1","provider":"tokenplan","pool":"plans","reason":"recovered","attempts":3}`,
		level:  "info", text: "quota wait left for a1 on tokenplan (3 attempts)"},
	{name: "quota routed", fx: policy.QuotaRouted{Agent: "a1", Pool: "plans", From: policy.Route{Channel: chA, ReasoningEffort: "high"}, To: policy.Route{Channel: chB}, Cause: "QUOTA"},
		record: `{"type":"quota-routed","agent":"a1","pool":"plans","from":{"provider":"deepseek","model":"flash","reasoningEffort":"high"},"to":{"provider":"tokenplan","model":"secondary"},"cause":"QUOTA"}`},
	{name: "quota routed, assigned", fx: policy.QuotaRouted{Agent: "a1", Pool: "plans", To: policy.Route{Channel: chB}, Cause: "assigned"},
		record: `{"type":"quota-routed","agent":"a1","pool":"plans","to":{"provider":"tokenplan","model":"secondary"},"cause":"assigned"}`},
	{name: "quota session", fx: policy.QuotaSession{Agent: "a1", Enabled: true, EnabledSource: "session", Pool: "plans", PoolSource: "inferred", Route: policy.Route{Channel: chA}},
		record: `{"type":"quota-session","agent":"a1","enabled":true,"enabledSource":"session","pool":"plans","poolSource":"inferred","route":{"provider":"deepseek","model":"flash"}}`},
	{name: "quota session, off", fx: policy.QuotaSession{Agent: "a1", EnabledSource: "default", PoolSource: "off"},
		record: `{"type":"quota-session","agent":"a1","enabled":false,"enabledSource":"default","poolSource":"off"}`},
	{name: "schedule wake", fx: policy.ScheduleWake{AtMs: 5}},
	{name: "refresh balance", fx: policy.RefreshBalance{Provider: "tokenplan"}},
	{name: "schedule refresh", fx: policy.ScheduleRefresh{AtMs: 5}},
}

// auditOf runs one effect through the step output's writer and returns its
// `audit` member (absent: not audited).
func auditOf(t *testing.T, fx policy.Effect) gjson.Result {
	t.Helper()
	a := auditor{maxFailovers: func() int { return policy.DefaultMaxFailovers }}
	var w writer
	writeOutput(&w, policy.Output{Verdict: policy.Verdict{Kind: policy.Pass}, Effects: []policy.Effect{fx}}, &a, nil)
	if !json.Valid(w.b) {
		t.Fatalf("the step output is not JSON: %s", w.b)
	}
	return gjson.GetBytes(w.b, "effects.0.audit")
}

func TestAuditRecordOfEveryEffect(t *testing.T) {
	for _, tt := range auditCases {
		t.Run(tt.name, func(t *testing.T) {
			got := auditOf(t, tt.fx)
			if tt.record == "" {
				if got.Exists() {
					t.Fatalf("not audited, yet: %s", got.Raw)
				}
				return
			}
			if rec := got.Get("record").Raw; rec != tt.record {
				t.Errorf("record\n got  %s\n want %s", rec, tt.record)
			}
			if lv, text := got.Get("log.level").String(), got.Get("log.text").String(); lv != tt.level || text != tt.text {
				t.Errorf("log line\n got  %s %q\n want %s %q", lv, text, tt.level, tt.text)
			}
			if got.Get("hostTurn").Bool() != tt.hostTurn {
				t.Errorf("hostTurn %v, want %v", got.Get("hostTurn").Bool(), tt.hostTurn)
			}
		})
	}
}

// effectTypes lists the policy's effect types by reading its sources: every
// type with an isEffect method.
func effectTypes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "policy", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Name.Name != "isEffect" || fn.Recv == nil {
				continue
			}
			if id, ok := fn.Recv.List[0].Type.(*ast.Ident); ok {
				names = append(names, id.Name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// Every effect kind the policy has is given its audit decision: a record
// (and this table says which), or named as not audited. The shim used to
// throw on a kind it did not know; a kind without its decision now panics in
// the module (writeOutput), and this test names it first.
func TestEveryEffectKindHasItsAuditDecision(t *testing.T) {
	covered := map[string]bool{}
	for _, tt := range auditCases {
		name := strings.TrimPrefix(fmt.Sprintf("%T", tt.fx), "policy.")
		covered[name] = true
		if (tt.record == "") != notAudited(tt.fx) {
			t.Errorf("%s: the table and notAudited disagree on whether it is audited", name)
		}
	}
	kinds := effectTypes(t)
	if len(kinds) < 20 {
		t.Fatalf("found only %d effect types in policy/: %v", len(kinds), kinds)
	}
	for _, k := range kinds {
		if !covered[k] {
			t.Errorf("effect %s has no case in auditCases: give it a record (audit.go) or name it in notAudited", k)
		}
	}
}

// Every record type the module writes is defined in host-shim/audit-types.js
// (which docs/audit.md lists: host-shim/test/audit-types.test.mjs), and every
// state, outcome and phase gives its own.
func TestAuditRecordTypesAreDefined(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "host-shim", "audit-types.js"))
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^\s*'([a-z][a-z-]*)':`).FindAllStringSubmatch(string(src), -1) {
		defined[m[1]] = true
	}
	var written []string
	add := func(fx policy.Effect) {
		if typ := auditOf(t, fx).Get("record.type").String(); typ != "" {
			written = append(written, typ)
		}
	}
	for _, tt := range auditCases {
		add(tt.fx)
	}
	for _, s := range []policy.CircuitState{policy.Closed, policy.Open, policy.HalfOpen} {
		add(policy.CircuitChanged{To: s})
	}
	for _, s := range []policy.SlowState{policy.NotSlow, policy.Slow, policy.SlowHalfOpen} {
		add(policy.SlowChanged{To: s})
	}
	for _, o := range []policy.ToolOutcome{policy.ToolRetry, policy.ToolSucceeded, policy.ToolNotDeclared, policy.ToolNotTransient, policy.ToolAttemptsExhausted} {
		add(policy.ToolRetried{Outcome: o})
	}
	for _, p := range []policy.WaitPhase{policy.WaitEntered, policy.WaitWaiting, policy.WaitLeft} {
		add(policy.QuotaWait{Phase: p})
	}
	for _, typ := range written {
		if !defined[typ] {
			t.Errorf("the module writes %q, which host-shim/audit-types.js does not define", typ)
		}
	}
	for _, want := range []string{"circuit-open", "circuit-half-open", "circuit-closed", "slow", "slow-probe", "slow-closed",
		"tool-retry", "tool-exhausted", "tool-recovered", "tool-failed", "quota-wait-entered", "quota-wait-waiting", "quota-wait-left"} {
		if !slices.Contains(written, want) {
			t.Errorf("no effect writes %q", want)
		}
	}
}

// What a step's audit entries cost: a failover step's output (two circuits,
// the failover, a wake), and the audit entries alone.
func BenchmarkAuditOfFailoverStep(b *testing.B) {
	out := policy.Output{Verdict: policy.Verdict{Kind: policy.Retry}, Effects: []policy.Effect{
		policy.CircuitChanged{Channel: chA, From: policy.Closed, To: policy.Open, Cause: "AUTH", Class: policy.ClassModelUnavailable, OpenUntilMs: 1777629663120},
		policy.CircuitChanged{Channel: policy.Channel{Provider: "deepseek", Model: "*"}, From: policy.Closed, To: policy.Open, Cause: "AUTH", Class: policy.ClassModelUnavailable, OpenUntilMs: 1777629663120},
		policy.FailedOver{Agent: "session-6900", From: chA, To: chB, Code: "AUTH", Class: policy.ClassModelUnavailable, Failovers: 1},
		policy.ScheduleWake{AtMs: 1777629663120},
	}}
	a := auditor{maxFailovers: func() int { return policy.DefaultMaxFailovers }}
	var w writer
	b.Run("step output", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			writeOutput(&w, out, &a, nil)
		}
		b.ReportMetric(float64(len(w.b)), "bytes")
	})
	b.Run("audit entries", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.reset()
			for _, fx := range out.Effects {
				a.write(&w, fx)
			}
		}
		b.ReportMetric(float64(len(w.b)), "bytes")
	})
}

// isoTime writes digit by digit what JavaScript's Date.toISOString writes;
// time's own layout formatting (which it used to call) is the reference,
// at the edges of four-digit years, of the epoch and of a JavaScript date.
func TestISOTimeAsTimeFormatsIt(t *testing.T) {
	reference := func(ms int64) string {
		tm := time.UnixMilli(ms).UTC()
		if y := tm.Year(); y < 0 || y > 9999 {
			sign := "+"
			if y < 0 {
				sign, y = "-", -y
			}
			return fmt.Sprintf("%s%06d%s", sign, y, tm.Format("-01-02T15:04:05.000Z"))
		}
		return tm.Format("2006-01-02T15:04:05.000Z")
	}
	year := func(y int) int64 { return time.Date(y, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli() }
	for _, ms := range []int64{0, -1, 1, 999, 1000, 1777629603120, -8.64e15, 8.64e15,
		year(0), year(0) - 1, year(-1), year(10000), year(10000) - 1, year(1970) - 86_400_001, 253402300799999} {
		a := auditor{}
		var w writer
		w.beginObject("")
		a.isoTime(&w, "t", ms)
		w.endObject()
		if got, want := string(w.b), `{"t":"`+reference(ms)+`"}`; got != want {
			t.Errorf("%d: got %s, want %s", ms, got, want)
		}
	}
}
