package codec

import (
	"encoding/json"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The `notify` member of each record that can mean a webhook notification:
// the body's fields in the order the body has them (docs/telemetry.md), so
// the shim's {event, type, time, ...body, host, delivery} is the body it
// sent before the module said it. "" for none.
func TestNotifyMemberOfEachRecord(t *testing.T) {
	at := int64(1764583200000) // 2025-12-01T10:00:00.000Z
	cases := []struct {
		name string
		fx   policy.Effect
		want string
	}{
		{"circuit open", policy.CircuitChanged{Channel: chOdd, From: policy.Closed, To: policy.Open, Cause: "QUOTA", Class: policy.ClassQuota, OpenUntilMs: at},
			`{"event":"provider-open","body":{"channel":{"provider":"a/b","model":"c\"d\u000a"},"class":"quota","cause":"QUOTA","openUntil":"2025-12-01T10:00:00.000Z"}}`},
		{"a provider opened by its models, no class", policy.CircuitChanged{Channel: policy.Channel{Provider: "deepseek", Model: "*"}, From: policy.Closed, To: policy.Open, Cause: "models-open"},
			`{"event":"provider-open","body":{"channel":{"provider":"deepseek","model":"*"},"cause":"models-open"}}`},
		{"give-up", policy.GaveUp{Agent: "s-1", Channel: chB, Reason: policy.BudgetExhausted, Code: "QUOTA", Tried: []policy.Tried{{Channel: chA, Code: "SERVER"}}, Failovers: 2},
			`{"event":"give-up","body":{"channel":{"provider":"tokenplan","model":"secondary"},"code":"QUOTA","reason":"budget-exhausted","session":"s-1"}}`},
		{"quota wait entered", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitEntered, Provider: "mock", Pool: "p", Attempts: 1, NextAttemptAtMs: at},
			`{"event":"quota-wait","body":{"channel":{"provider":"mock","model":"*"},"pool":"p","nextAttemptAt":"2025-12-01T10:00:00.000Z","session":"s-2"}}`},
		{"return, channels as text", policy.Returned{Agent: "s-1", From: chB, To: chA},
			`{"event":"returned","body":{"channel":"deepseek/flash","from":"tokenplan/secondary","session":"s-1"}}`},
		{"circuit half-open", policy.CircuitChanged{Channel: chA, From: policy.Open, To: policy.HalfOpen, Cause: "cooled-down"}, ""},
		{"quota wait waiting", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitWaiting, Provider: "mock", NextAttemptAtMs: at}, ""},
		{"quota wait left", policy.QuotaWait{Agent: "s-2", Phase: policy.WaitLeft, Provider: "mock", Reason: policy.LeftRecovered}, ""},
		{"failover", policy.FailedOver{Agent: "s-1", From: chA, To: chB, Code: "QUOTA", Class: policy.ClassQuota}, ""},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := auditor{maxFailovers: func() int { return policy.DefaultMaxFailovers }, state: new(policy.State), now: at}
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
