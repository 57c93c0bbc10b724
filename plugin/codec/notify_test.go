package codec

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The `notify` member of each record that can mean a webhook notification:
// the body's fields in the order the body has them (docs/telemetry.md), so
// the shim's {event, type, time, ...body, host, delivery} is the body it
// sent before the module said it, and the targets that chose its kind
// (the row's first chose give-up only, its second every kind). "" for none.
func TestNotifyMemberOfEachRecord(t *testing.T) {
	at := int64(1764583200000) // 2025-12-01T10:00:00.000Z
	cases := []struct {
		name string
		fx   policy.Effect
		want string
	}{
		{"circuit open", policy.CircuitChanged{Channel: chOdd, From: policy.Closed, To: policy.Open, Cause: "QUOTA", Class: policy.ClassQuota, OpenUntilMs: at},
			`{"event":"provider-open","targets":[1],"body":{"channel":{"provider":"a/b","model":"c\"d\u000a"},"class":"quota","cause":"QUOTA","openUntil":"2025-12-01T10:00:00.000Z"}}`},
		{"a provider opened by its models, no class", policy.CircuitChanged{Channel: policy.Channel{Provider: "deepseek", Model: "*"}, From: policy.Closed, To: policy.Open, Cause: "models-open"},
			`{"event":"provider-open","targets":[1],"body":{"channel":{"provider":"deepseek","model":"*"},"cause":"models-open"}}`},
		{"give-up", policy.GaveUp{Agent: "s-1", Channel: chB, Reason: policy.BudgetExhausted, Code: "QUOTA", Tried: []policy.Tried{{Channel: chA, Code: "SERVER"}}, Failovers: 2},
			`{"event":"give-up","targets":[0,1],"body":{"channel":{"provider":"tokenplan","model":"secondary"},"code":"QUOTA","reason":"budget-exhausted","session":"s-1"}}`},
		{"quota wait entered", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitEntered, Provider: "mock", Pool: "p", Attempts: 1, NextAttemptAtMs: at},
			`{"event":"quota-wait","targets":[1],"body":{"channel":{"provider":"mock","model":"*"},"pool":"p","nextAttemptAt":"2025-12-01T10:00:00.000Z","session":"s-2"}}`},
		{"return, channels as text", policy.Returned{Agent: "s-1", From: chB, To: chA},
			`{"event":"returned","targets":[1],"body":{"channel":"deepseek/flash","from":"tokenplan/secondary","session":"s-1"}}`},
		{"circuit half-open", policy.CircuitChanged{Channel: chA, From: policy.Open, To: policy.HalfOpen, Cause: "cooled-down"}, ""},
		{"quota wait waiting", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitWaiting, Provider: "mock", NextAttemptAtMs: at}, ""},
		{"quota wait left", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitLeft, Provider: "mock", Reason: policy.LeftRecovered}, ""},
		{"failover", policy.FailedOver{Agent: "s-1", From: chA, To: chB, Code: "QUOTA", Class: policy.ClassQuota}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := auditor{maxFailovers: func() int { return policy.DefaultMaxFailovers }, state: notifying(t), now: at}
			notify := func() gjson.Result {
				var w writer
				writeOutput(&w, policy.Output{Verdict: policy.Verdict{Kind: policy.Pass}, Effects: []policy.Effect{tt.fx}}, &a, nil)
				if !json.Valid(w.b) {
					t.Fatalf("the step output is not JSON: %s", w.b)
				}
				return gjson.GetBytes(w.b, "effects.0.audit.notify")
			}
			if got := notify(); got.Raw != tt.want {
				t.Fatalf("notify:\n got %s\nwant %s", got.Raw, tt.want)
			}
			a.now += policy.NotifyWindowMs - 1
			if got := notify(); got.Exists() {
				t.Fatalf("again within the window: %s", got.Raw)
			}
		})
	}
}

// notifying is a state whose row names two receivers: the first chose
// give-up only, the second every kind.
func notifying(t *testing.T) *policy.State {
	t.Helper()
	cfg := policy.DefaultConfig()
	cfg.Notify = []policy.NotifyTarget{
		{URL: "http://127.0.0.1:9/a", Events: []policy.NotifyKind{policy.NotifyGiveUp}, TimeoutMs: policy.DefaultNotifyTimeoutMs},
		{URL: "http://127.0.0.1:9/b", Events: policy.NotifyKinds, TimeoutMs: policy.DefaultNotifyTimeoutMs},
	}
	s, err := policy.NewState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A record whose kind no receiver chose means no notification, and spends
// no window: a receiver added by the next config is told at once.
func TestNotifyOnlyWhatATargetChose(t *testing.T) {
	cfg := policy.DefaultConfig()
	cfg.Notify = []policy.NotifyTarget{{URL: "http://127.0.0.1:9/a", Events: []policy.NotifyKind{policy.NotifyGiveUp}, TimeoutMs: 100}}
	s, err := policy.NewState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	open := policy.CircuitChanged{Channel: chA, From: policy.Closed, To: policy.Open, Cause: "QUOTA"}
	a := auditor{maxFailovers: func() int { return policy.DefaultMaxFailovers }, state: s, now: 1}
	var w writer
	writeOutput(&w, policy.Output{Verdict: policy.Verdict{Kind: policy.Pass}, Effects: []policy.Effect{open}}, &a, nil)
	if n := gjson.GetBytes(w.b, "effects.0.audit.notify"); n.Exists() {
		t.Fatalf("no receiver chose provider-open: %s", n.Raw)
	}
	next := notifying(t)
	next.KeepNotified(s)
	a.state, w = next, writer{}
	writeOutput(&w, policy.Output{Verdict: policy.Verdict{Kind: policy.Pass}, Effects: []policy.Effect{open}}, &a, nil)
	if n := gjson.GetBytes(w.b, "effects.0.audit.notify.targets"); n.Raw != "[1]" {
		t.Fatalf("the next config's receiver is told: %s", n.Raw)
	}
}

// The row's `notify` list: taken with each timeout spelled out, or refused
// naming the key, and never quoting a URL back (webhook URLs carry tokens).
func TestNotifyConfig(t *testing.T) {
	const ok = `"url":"http://127.0.0.1:9/hook"`
	cases := []struct{ row, want string }{
		{`[]`, `[]`},
		{`[{` + ok + `,"events":["provider-open","returned"],"secretEnv":"HOOK_SECRET"}]`,
			`[{"url":"http://127.0.0.1:9/hook","events":["provider-open","returned"],"secretEnv":"HOOK_SECRET","timeoutMs":5000}]`},
		{`[{"url":"HTTPS://[::1]:8443/h?t=1#x","events":["give-up"],"timeoutMs":100}]`,
			`[{"url":"HTTPS://[::1]:8443/h?t=1#x","events":["give-up"],"timeoutMs":100}]`},
		{`[{"url":"https://例え.jp/hook","events":["give-up"]}]`, `[{"url":"https://例え.jp/hook","events":["give-up"],"timeoutMs":5000}]`},
		{`{}`, `config key "notify": must be an array`},
		{`[42]`, `config key "notify[0]": must be an object`},
		{`[{"url":"ftp://x/y?token=t-1","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"not a url","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"https://u:p@x/y","events":["give-up"]}]`, `config key "notify[0].url": must not hold credentials: sign with secretEnv instead`},
		{`[{"url":"http://","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"http://h:99999/","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"http://a:b:80/","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"http://[zz]/","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{"url":"http://h/a b","events":["give-up"]}]`, `config key "notify[0].url": must be an http:// or https:// URL`},
		{`[{` + ok + `}]`, `config key "notify[0].events": is required`},
		{`[{` + ok + `,"events":[]}]`, `config key "notify[0].events": must be a non-empty list of: provider-open, give-up, quota-wait, returned`},
		{`[{` + ok + `,"events":["give-up"]},{` + ok + `,"events":["open"]}]`,
			`config key "notify[1].events[0]": unknown event "open" (known: provider-open, give-up, quota-wait, returned)`},
		{`[{` + ok + `,"events":["give-up","give-up"]}]`, `config key "notify[0].events": lists an event twice`},
		{`[{` + ok + `,"events":["give-up"],"secretEnv":"not a name"}]`,
			`config key "notify[0].secretEnv": must be an environment variable name, e.g. DSH_NOTIFY_SECRET (the secret itself never goes in the config)`},
		{`[{` + ok + `,"events":["give-up"],"timeoutMs":5}]`, `config key "notify[0].timeoutMs": must be an integer between 100 and 60000`},
		{`[{` + ok + `,"events":["give-up"],"secret":"x"}]`, `config key "notify[0].secret": unknown key (known: [url events secretEnv timeoutMs])`},
	}
	for _, tt := range cases {
		t.Run(tt.row, func(t *testing.T) {
			cfg, err := decodeConfig(gjson.Parse(`{"notify":` + tt.row + `}`))
			got := ""
			if err != nil {
				got = err.Error()
				if strings.Contains(got, "t-1") {
					t.Fatalf("the URL is quoted back: %s", got)
				}
			} else {
				var w writer
				writeNotifyConfig(&w, cfg.Notify)
				got = strings.TrimPrefix(string(w.b), `"notify":`)
			}
			if got != tt.want {
				t.Fatalf("\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	// 21 targets are one too many.
	many := strings.Repeat(`{`+ok+`,"events":["give-up"]},`, policy.MaxNotifyTargets+1)
	if _, err := decodeConfig(gjson.Parse(`{"notify":[` + strings.TrimSuffix(many, ",") + `]}`)); err == nil || err.Error() != `config key "notify": at most 20 targets` {
		t.Fatalf("21 targets: %v", err)
	}
}

// The configure answer's `recorded` config names no receiver's path, and
// configures to the same decisions: only a row with receivers has one.
func TestConfiguredRecordsNoWebhookToken(t *testing.T) {
	row := `{"chain":[{"provider":"p","model":"m"}],"notify":[{"url":"HTTPS://Hooks.example.com:8443/t-9921/x?k=t-9921","events":["give-up"]}]}`
	cfg, err := decodeConfig(gjson.Parse(row))
	if err != nil {
		t.Fatal(err)
	}
	out := gjson.ParseBytes(configured(cfg))
	rec := out.Get("recorded")
	if strings.Contains(rec.Raw, "t-9921") || !rec.Exists() {
		t.Fatalf("recorded: %s", rec.Raw)
	}
	if got := rec.Get("notify.0.url").Str; got != "https://Hooks.example.com:8443" {
		t.Fatalf("the origin: %s", got)
	}
	again, err := decodeConfig(rec)
	if err != nil {
		t.Fatalf("the recorded config does not configure: %v", err)
	}
	if len(again.Notify) != 1 || again.Notify[0].Events[0] != policy.NotifyGiveUp || again.Chain[0] != cfg.Chain[0] {
		t.Fatalf("configured otherwise: %+v", again)
	}
	plain, _ := decodeConfig(gjson.Parse(`{"chain":[{"provider":"p","model":"m"}]}`))
	if gjson.ParseBytes(configured(plain)).Get("recorded").Exists() {
		t.Fatal("a row without receivers is recorded as given")
	}
}
