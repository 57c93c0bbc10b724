package policy

import (
	"strings"
	"testing"
)

// Fuzz targets for the policy's own parsers and for Step itself. Seeds:
// testdata/fuzz/<target>/. Run one with `go test -fuzz FuzzStep ./policy`.

// The reset-time wording parser: any text, any time; a hint is 0 or a wait
// of at most a week, never a panic.
func FuzzResetHint(f *testing.F) {
	for _, s := range []string{"resets at 2030-01-01 05:00:00 UTC", "try again in 20s", "请在5分钟后重试", "reset on 2026-13-45 99:99",
		"Please try again in 1h2m3.5s", "重置时间：2026-01-01 00:00:00", "resets at ", "in 9999999999999999999 seconds", "将于2026-01-01 08:00"} {
		f.Add(s, int64(1_767_225_600_000))
	}
	f.Fuzz(func(t *testing.T, msg string, now int64) {
		if h := resetHint(msg, now); h < 0 || h > maxResetHintMs {
			t.Fatalf("resetHint(%q, %d) = %d, outside [0, a week]", msg, now, h)
		}
	})
}

// The config validator: any numbers; what it accepts runs.
func FuzzValidate(f *testing.F) {
	d := DefaultConfig()
	f.Add(d.FailureThreshold, d.BurstWindowMs, d.CooldownMs, d.MaxCooldownMs, d.ProviderThreshold, d.BackoffBaseMs, d.BackoffMaxMs,
		d.MaxFailovers, d.GiveUpAfterMs, d.RetryBudgetPercent, d.RetryBudgetFloor, "return", "p/m")
	f.Add(0, int64(-1), int64(-1), int64(0), -1, int64(0), int64(0), -1, int64(-1), -1, -1, "", "")
	f.Fuzz(func(t *testing.T, threshold int, burst, cool, maxCool int64, provThreshold int, base, maxBackoff int64,
		failovers int, giveUp int64, pct, floor int, recovery, chain string) {
		cfg := DefaultConfig()
		cfg.FailureThreshold, cfg.BurstWindowMs, cfg.CooldownMs, cfg.MaxCooldownMs = threshold, burst, cool, maxCool
		cfg.ProviderThreshold, cfg.BackoffBaseMs, cfg.BackoffMaxMs = provThreshold, base, maxBackoff
		cfg.MaxFailovers, cfg.GiveUpAfterMs, cfg.RetryBudgetPercent, cfg.RetryBudgetFloor = failovers, giveUp, pct, floor
		cfg.Recovery = Recovery(recovery)
		for _, c := range strings.Split(chain, ",") {
			p, m, _ := strings.Cut(c, "|")
			cfg.Chain = append(cfg.Chain, Channel{p, m})
		}
		s, err := NewState(cfg)
		if err != nil {
			if fe, ok := err.(*FieldError); !ok || fe.Key == "" || fe.Reason == "" {
				t.Fatalf("an error that names no key: %v", err)
			}
			return
		}
		// Accepted: a failure storm on the primary runs without a panic.
		now := int64(1_767_225_600_000)
		for i := range 20 {
			now += 1000
			Step(s, now, Request{Agent: "a", Proposed: cfg.Chain[0]})
			Step(s, now, RequestError{Agent: "a", Provider: cfg.Chain[0].Provider, Failure: Failure{Code: "SERVER", Status: 503},
				Phase: AfterHost, Rand: uint64(i) * 0x9E3779B97F4A7C15 % randRange})
			Step(s, now, Wake{})
		}
	})
}

// Step itself: a random sequence of events, decoded from the fuzzer's bytes,
// over a few agents and channels (slashes included: "a/b"+"c" and "a"+"b/c").
// No panic; every verdict is one its event may get; a wake is never asked
// for in the past; the agent table stays bounded.
func FuzzStep(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 1, 0, 0, 1, 4, 0, 0, 200})
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14"))
	f.Add([]byte(strings.Repeat("\x01\x02\x03\x00", 40)))
	chans := []Channel{{"a/b", "c"}, {"a", "b/c"}, {"p", "m"}, {"p", "n"}, {"代理", "模型/β"}}
	codes := []Failure{{Code: "SERVER", Status: 503}, {Code: "RATE_LIMIT", Status: 429, RetryAfterMs: 20_000},
		{Code: "HTTP_402", Message: "Insufficient Balance"}, {Code: "RATE_LIMIT", Message: "usage limit reached, resets at 2026-01-02 00:00:00 UTC"},
		{Code: "ABORTED"}, {Code: "MODEL_NOT_FOUND"}, {Code: "STREAM_CLOSED"}, {Code: "RATE_LIMIT", RetryAfterMs: 1 << 50},
		{Code: "CONTEXT_WINDOW_EXCEEDED", Status: 400}}
	host := &HostRetryPolicy{Mode: "normal", MaxRetries: 2, RetryableCodes: []string{"RATE_LIMIT", "SERVER", "TIMEOUT"}}
	f.Fuzz(func(t *testing.T, in []byte) {
		cfg := DefaultConfig()
		cfg.Chain = chans[1:4]
		cfg.FailureThreshold = 1 + int(len(in)%3)
		cfg.Slow = SlowConfig{FirstTokenMs: 5000, MinCalls: 1 + len(in)%2}
		cfg.Targets = map[Channel]TargetSettings{chans[2]: {FailureThreshold: 1 + int(len(in)%2), CooldownMs: 5_000}}
		s, err := NewState(cfg)
		if err != nil {
			t.Fatal(err)
		}
		now := int64(1_767_225_600_000)
		next := func() byte {
			if len(in) == 0 {
				return 0
			}
			b := in[0]
			in = in[1:]
			return b
		}
		for len(in) > 0 {
			k, x, y := next(), next(), next()
			now += int64(y) * int64(y) * 100
			agent := []string{"a1", "a2", "a3", "", "\x00probe"}[x%5]
			ch := chans[int(x/5)%len(chans)]
			var ev Event
			switch k % 10 {
			case 0:
				ev = Request{Agent: agent, Proposed: ch, ReasoningEffort: []string{"", "high"}[y%2], ContextTokens: int64(y) * 5_000}
			case 1:
				ev = RequestError{Agent: agent, Provider: ch.Provider, Failure: codes[int(y)%len(codes)],
					Phase: []Phase{BeforeHost, AfterHost}[y%2], HostRetry: host, Rand: uint64(y) << 40}
			case 2:
				ev = Settled{Agent: agent}
			case 3:
				ev = Disposed{Agent: agent}
			case 4:
				ev = Wake{}
			case 5:
				ev = ProbeResult{Channel: ch, OK: y%2 == 0, Failure: codes[int(y)%len(codes)]}
			case 6:
				ev = ModelInfo{Channel: ch, Known: y%2 == 0, Efforts: []string{"high"}, ContextWindow: []int64{0, 128_000, 1_000_000}[y%3]}
			case 7:
				ev = SetBackup{Channel: []Channel{{}, ch}[y%2]}
			case 8:
				ev = ToolResult{Agent: agent, Call: "c", Tool: "fetch", Attempt: 1 + int(y%4), Failure: &ToolFailure{Message: "ECONNRESET"}, Rand: uint64(y)}
			case 9: // a first token, fast or slow (slow.go)
				ms := int64(y) * 40
				ev = StreamCheck{Channel: ch, OpenedMs: now - ms, Chunks: 1, LastChunkMs: now, FirstToken: true, FirstTokenMs: ms}
			}
			out := Step(s, now, ev)
			ok := map[VerdictKind]bool{}
			switch ev.(type) {
			case Request:
				ok[Pass], ok[Swap] = true, true
			case RequestError:
				ok[Defer], ok[Retry], ok[Wait], ok[Delegate] = true, true, true, true
			case ToolResult:
				ok[RetryTool], ok[ReturnTool] = true, true
			case StreamCheck:
				ok[Watch], ok[Pass] = true, true
			default:
				ok[Pass] = true
			}
			if !ok[out.Verdict.Kind] {
				t.Fatalf("%T answered %q", ev, out.Verdict.Kind)
			}
			if out.Verdict.Kind == Wait && out.Verdict.DelayMs < 0 {
				t.Fatalf("a negative wait: %+v", out.Verdict)
			}
			for _, fx := range out.Effects {
				if w, isWake := fx.(ScheduleWake); isWake && w.AtMs != 0 && w.AtMs < now {
					t.Fatalf("a wake asked for in the past: %d < %d", w.AtMs, now)
				}
			}
			slow := 0
			for _, c := range s.circuits {
				if c.slow.slow() {
					slow++
				}
			}
			if slow != s.slowCount {
				t.Fatalf("%d channels slow, the count says %d", slow, s.slowCount)
			}
			if s.agents.idle.n > maxIdleAgents {
				t.Fatalf("%d idle agents, more than the table's %d", s.agents.idle.n, maxIdleAgents)
			}
		}
	})
}
