package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestToolRetryDeclares(t *testing.T) {
	tests := []struct {
		name     string
		patterns []string
		tool     string
		want     bool
	}{
		{"empty list declares nothing", nil, "web_fetch", false},
		{"empty list, empty name", nil, "", false},
		{"exact name", []string{"web_fetch"}, "web_fetch", true},
		{"exact name is not a prefix", []string{"web_fetch"}, "web_fetch_all", false},
		{"exact name is not a suffix", []string{"fetch"}, "web_fetch", false},
		{"exact name is case-sensitive", []string{"web_fetch"}, "Web_Fetch", false},
		{"prefix matches longer names", []string{"mcp_search_*"}, "mcp_search_docs", true},
		{"prefix matches the prefix itself", []string{"mcp_search_*"}, "mcp_search_", true},
		{"prefix does not match shorter names", []string{"mcp_search_*"}, "mcp_search", false},
		{"prefix does not match elsewhere", []string{"search_*"}, "mcp_search_docs", false},
		{"a regexp's .* is a literal prefix: matches nothing real", []string{".*"}, "web_fetch", false},
		{".* does not match bash", []string{".*"}, "bash", false},
		{"regexp alternation is literal", []string{"read|write"}, "read", false},
		{"any pattern of several", []string{"a", "web_*", "c"}, "web_search", true},
		{"none of several", []string{"a", "web_*", "c"}, "bash", false},
		{"a bare * (rejected by Validate) still matches nothing", []string{"*"}, "bash", false},
		{"an empty tool name matches no prefix", []string{"w*"}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultToolRetryConfig()
			c.Retry = tt.patterns
			if got := c.Declares(tt.tool); got != tt.want {
				t.Errorf("%q declares %q = %v, want %v", tt.patterns, tt.tool, got, tt.want)
			}
		})
	}
}

func TestToolRetryValidateNamesTheKey(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*ToolRetryConfig)
		key    string // "" when valid
	}{
		{"defaults", func(*ToolRetryConfig) {}, ""},
		{"names and prefixes", func(c *ToolRetryConfig) { c.Retry = []string{"web_fetch", "mcp_*", ".*"} }, ""},
		{"one attempt, no repeats", func(c *ToolRetryConfig) { c.MaxAttempts = 1 }, ""},
		{"empty pattern", func(c *ToolRetryConfig) { c.Retry = []string{"web_fetch", ""} }, "tools.retry[1]"},
		{"blank pattern", func(c *ToolRetryConfig) { c.Retry = []string{"  "} }, "tools.retry[0]"},
		{"bare star", func(c *ToolRetryConfig) { c.Retry = []string{"*"} }, "tools.retry[0]"},
		{"star inside", func(c *ToolRetryConfig) { c.Retry = []string{"ok", "web_*_docs"} }, "tools.retry[1]"},
		{"leading star", func(c *ToolRetryConfig) { c.Retry = []string{"*fetch"} }, "tools.retry[0]"},
		{"two stars", func(c *ToolRetryConfig) { c.Retry = []string{"web**"} }, "tools.retry[0]"},
		{"zero attempts", func(c *ToolRetryConfig) { c.MaxAttempts = 0 }, "tools.maxAttempts"},
		{"too many attempts", func(c *ToolRetryConfig) { c.MaxAttempts = 101 }, "tools.maxAttempts"},
		{"zero backoff", func(c *ToolRetryConfig) { c.BackoffMs = 0 }, "tools.backoffMs"},
		{"cap below base", func(c *ToolRetryConfig) { c.MaxBackoffMs = c.BackoffMs - 1 }, "tools.maxBackoffMs"},
		{"cap above an hour", func(c *ToolRetryConfig) { c.MaxBackoffMs = toolHourMs + 1 }, "tools.maxBackoffMs"},
		{"zero deadline", func(c *ToolRetryConfig) { c.RetryDeadlineMs = 0 }, "tools.retryDeadlineMs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultToolRetryConfig()
			tt.mutate(&c)
			err := c.Validate()
			if tt.key == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Key != tt.key {
				t.Fatalf("Validate() = %v, want a FieldError for %s", err, tt.key)
			}
			// And through the whole row, as the codec reports it.
			row := DefaultConfig()
			row.Tools = c
			if err := row.Validate(); !errors.As(err, &fe) || fe.Key != tt.key {
				t.Fatalf("Config.Validate() = %v, want a FieldError for %s", err, tt.key)
			}
		})
	}
}

func TestClassifyToolFailure(t *testing.T) {
	tests := []struct {
		name string
		f    ToolFailure
		want ToolCause
	}{
		// Worth repeating: no answer, or an answer that said "later".
		{"node socket reset", ToolFailure{Message: "read ECONNRESET"}, ToolCauseSocket},
		{"socket hang up", ToolFailure{Message: "socket hang up"}, ToolCauseSocket},
		{"undici socket", ToolFailure{Message: "UND_ERR_SOCKET: other side closed"}, ToolCauseSocket},
		{"fetch failed", ToolFailure{Message: "TypeError: fetch failed"}, ToolCauseSocket},
		{"structured reset code", ToolFailure{Code: "ECONNRESET", Message: "upstream closed"}, ToolCauseSocket},
		{"chinese connection reset", ToolFailure{Message: "数据源连接被重置"}, ToolCauseSocket},
		{"status 429 in text", ToolFailure{Code: "WEB_PROVIDER_ERROR", Message: "DeepSeek API error (HTTP 429)"}, ToolCauseRateLimit},
		{"429 reason phrase", ToolFailure{Message: "429 Too Many Requests"}, ToolCauseRateLimit},
		{"english rate limit", ToolFailure{Message: "Rate limit exceeded for this key"}, ToolCauseRateLimit},
		{"chinese rate limit", ToolFailure{Message: "请求过于频繁，请稍后再试"}, ToolCauseRateLimit},
		{"chinese frequency cap", ToolFailure{Message: "接口调用频率超限"}, ToolCauseRateLimit},
		{"a 403 that says rate limit", ToolFailure{Message: "HTTP 403: You have exceeded a secondary rate limit"}, ToolCauseRateLimit},
		{"status 503", ToolFailure{Code: "WEB_PROVIDER_ERROR", Message: "DeepSeek API error (HTTP 503)"}, ToolCauseServer},
		{"axios 502", ToolFailure{Message: "Request failed with status code 502"}, ToolCauseServer},
		{"status line", ToolFailure{Message: "upstream answered HTTP/1.1 500 Internal Server Error"}, ToolCauseServer},
		{"chinese busy", ToolFailure{Message: "服务繁忙"}, ToolCauseServer},
		{"host timeout policy", ToolFailure{Code: "TOOL_TIMEOUT", Message: "tool call timed out after 30000ms"}, ToolCauseTimeout},
		{"english timeout", ToolFailure{Message: "connect ETIMEDOUT 10.0.0.1:443"}, ToolCauseTimeout},
		{"chinese timeout", ToolFailure{Message: "查询超时"}, ToolCauseTimeout},
		{"model code from a tool that calls a model", ToolFailure{Code: "RATE_LIMIT", Message: "429"}, ToolCauseRateLimit},
		{"model transport code", ToolFailure{Code: "TRANSPORT"}, ToolCauseSocket},
		{"lower-case code", ToolFailure{Code: "tool_timeout"}, ToolCauseTimeout},

		// Never: the same call fails the same way forever.
		{"wrong arguments", ToolFailure{Code: "INVALID_ARGS", Message: "invalid arguments: /url: must be string"}, ToolCausePermanent},
		{"unknown tool", ToolFailure{Code: "UNKNOWN_TOOL", Message: `unknown tool "x"`}, ToolCausePermanent},
		{"output schema", ToolFailure{Code: "INVALID_TOOL_OUTPUT", Message: `tool "x" returned invalid output: timeout: must be number`}, ToolCausePermanent},
		{"schema wording", ToolFailure{Message: "response does not match schema (request timed out field)"}, ToolCausePermanent},
		{"permission denied", ToolFailure{Message: "EACCES: permission denied, open '/var/log/timeout.log'"}, ToolCausePermanent},
		{"chinese permission", ToolFailure{Message: "没有权限访问该接口，请稍后再试"}, ToolCausePermanent},
		{"missing file", ToolFailure{Message: "ENOENT: no such file or directory, open 'socket hang up.txt'"}, ToolCausePermanent},
		{"chinese missing file", ToolFailure{Message: "文件不存在"}, ToolCausePermanent},
		{"fs not found code", ToolFailure{Code: "FS_NOT_FOUND", Message: "connection reset.txt not found"}, ToolCausePermanent},
		{"cancelled", ToolFailure{Code: "ABORTED", Message: "tool call aborted"}, ToolCausePermanent},
		{"cancelled before dispatch", ToolFailure{Code: "ABORTED_BEFORE_DISPATCH"}, ToolCausePermanent},
		{"chinese credits, behind a 429", ToolFailure{Message: "HTTP 429: 积分不足"}, ToolCauseQuota},
		{"chinese credits alone", ToolFailure{Message: "积分不足，请充值"}, ToolCauseQuota},
		{"chinese usage cap saying later", ToolFailure{Message: "已达到 Token Plan 用量上限，请稍后再试"}, ToolCauseQuota},
		{"english balance", ToolFailure{Message: "Insufficient balance on the search account"}, ToolCauseQuota},
		{"402", ToolFailure{Message: "HTTP 402 Payment Required"}, ToolCauseQuota},
		{"400", ToolFailure{Message: "HTTP 400: bad query"}, ToolCausePermanent},
		{"404 reason phrase", ToolFailure{Message: "404 Not Found"}, ToolCausePermanent},
		{"model auth code", ToolFailure{Code: "AUTH", Message: "invalid api key"}, ToolCausePermanent},
		{"web credential missing", ToolFailure{Code: "WEB_PROVIDER_CREDENTIAL_MISSING", Message: "no API key; try again later"}, ToolCausePermanent},

		// Nothing says transient: not repeated.
		{"plain failure", ToolFailure{Message: "query returned no rows"}, ToolCauseUnrecognised},
		{"a bare number is not a status", ToolFailure{Message: "syntax error at line 429"}, ToolCauseUnrecognised},
		{"a byte count is not a status", ToolFailure{Message: "short read: 503 bytes"}, ToolCauseUnrecognised},
		{"a longer number is not a status", ToolFailure{Message: "HTTP 5030"}, ToolCauseUnrecognised},
		{"empty", ToolFailure{}, ToolCauseUnrecognised},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyToolFailure(tt.f); got != tt.want {
				t.Errorf("ClassifyToolFailure(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

func TestToolCauseTransient(t *testing.T) {
	var transient []ToolCause
	for _, k := range ToolCauses() {
		if k.Transient() {
			transient = append(transient, k)
		}
	}
	want := []ToolCause{ToolCauseSocket, ToolCauseRateLimit, ToolCauseServer, ToolCauseTimeout}
	if !reflect.DeepEqual(transient, want) {
		t.Fatalf("transient causes %v, want %v", transient, want)
	}
}

func TestToolBackoff(t *testing.T) {
	const top = randRange - 1
	tests := []struct {
		name string
		rand uint64
		want []int64 // retries 1..7 at 500 doubling, cap 8000
	}{
		{"highest draw: the ceiling, doubling to the cap", top, []int64{500, 1000, 2000, 4000, 8000, 8000, 8000}},
		{"lowest draw: half the ceiling, never zero", 0, []int64{250, 500, 1000, 2000, 4000, 4000, 4000}},
		{"middle draw", randRange / 2, []int64{375, 750, 1500, 3000, 6000, 6000, 6000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int64
			for retry := 1; retry <= len(tt.want); retry++ {
				got = append(got, ToolBackoff(retry, 500, 8000, tt.rand))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("delays %v, want %v", got, tt.want)
			}
		})
	}
	// Every draw and retry stays in [ceiling/2, ceiling], odd bases included.
	r := uint64(0x9E3779B97F4A7C15)
	for _, base := range []int64{1, 3, 500, 7001} {
		for retry := 1; retry <= 70; retry++ {
			ceiling := min(int64(9000), base<<min(retry-1, 40))
			for i := 0; i < 100; i++ {
				r ^= r << 13
				r ^= r >> 7
				r ^= r << 17
				d := ToolBackoff(retry, base, 9000, r)
				if d < ceiling/2 || d > ceiling {
					t.Fatalf("base %d retry %d draw %d: %d outside [%d, %d]", base, retry, r, d, ceiling/2, ceiling)
				}
			}
		}
	}
}

func TestToolDecide(t *testing.T) {
	reset := &ToolFailure{Message: "read ECONNRESET"}
	denied := &ToolFailure{Message: "EACCES: permission denied"}
	cfg := DefaultToolRetryConfig()
	cfg.Retry = []string{"web_fetch", "db_*"}
	tests := []struct {
		name     string
		tool     string
		attempt  int
		failure  *ToolFailure
		want     ToolOutcome
		cause    ToolCause
		note     string // a substring; "" when there must be none
		delay    int64  // with the highest draw
		deadline int64
	}{
		{"success", "web_fetch", 1, nil, ToolSucceeded, "", "", 0, 0},
		{"success of an undeclared tool", "bash", 1, nil, ToolSucceeded, "", "", 0, 0},
		{"success after repeats", "web_fetch", 3, nil, ToolSucceeded, "", "", 0, 0},
		{"transient failure, first attempt", "web_fetch", 1, reset, ToolRetry, ToolCauseSocket, "", 500, DefaultToolRetryDeadlineMs},
		{"transient failure, second attempt", "db_query", 2, reset, ToolRetry, ToolCauseSocket, "", 1000, DefaultToolRetryDeadlineMs},
		{"transient failure, last attempt", "web_fetch", 3, reset, ToolAttemptsExhausted, ToolCauseSocket, "failed after 3 attempts (last failure: socket)", 0, 0},
		{"past the last attempt", "web_fetch", 7, reset, ToolAttemptsExhausted, ToolCauseSocket, "failed after 7 attempts", 0, 0},
		{"transient failure of an undeclared tool", "bash", 1, reset, ToolNotDeclared, "", "", 0, 0},
		{"undeclared: .* is not a wildcard", "web_search", 1, reset, ToolNotDeclared, "", "", 0, 0},
		{"permanent failure, first attempt: no note", "web_fetch", 1, denied, ToolNotTransient, ToolCausePermanent, "", 0, 0},
		{"permanent failure after a repeat: noted", "web_fetch", 2, denied, ToolNotTransient, ToolCausePermanent, "failed after 2 attempts (last failure: permanent)", 0, 0},
		{"unrecognised failure", "web_fetch", 1, &ToolFailure{Message: "no rows"}, ToolNotTransient, ToolCauseUnrecognised, "", 0, 0},
		{"quota", "web_fetch", 1, &ToolFailure{Message: "积分不足"}, ToolNotTransient, ToolCauseQuota, "", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := cfg.Decide(ToolResult{Tool: tt.tool, Attempt: tt.attempt, Failure: tt.failure, Rand: randRange - 1})
			if d.Outcome != tt.want || d.Cause != tt.cause || d.Attempts != tt.attempt {
				t.Fatalf("Decide = %+v, want outcome %s cause %q attempts %d", d, tt.want, tt.cause, tt.attempt)
			}
			if d.DelayMs != tt.delay || d.DeadlineMs != tt.deadline {
				t.Errorf("delay %d deadline %d, want %d and %d", d.DelayMs, d.DeadlineMs, tt.delay, tt.deadline)
			}
			if (tt.note == "") != (d.Note == "") || !strings.Contains(d.Note, tt.note) {
				t.Errorf("note %q, want one containing %q", d.Note, tt.note)
			}
			if strings.Contains(d.Note, "\n") {
				t.Errorf("the note is more than one line: %q", d.Note)
			}
		})
	}
	// A repeat is never held to a longer deadline than the tool's own budget,
	// which the host's timeout policy applied to the first attempt.
	for _, tc := range []struct{ declared, want int64 }{{0, DefaultToolRetryDeadlineMs}, {30_000, 30_000}, {10 * 60_000, DefaultToolRetryDeadlineMs}} {
		d := cfg.Decide(ToolResult{Tool: "web_fetch", Attempt: 1, Failure: reset, TimeoutMs: tc.declared})
		if d.Outcome != ToolRetry || d.DeadlineMs != tc.want {
			t.Errorf("declared timeout %d: %+v, want a retry under %d", tc.declared, d, tc.want)
		}
	}
	// One attempt allowed: a transient failure is exhausted at once, and no
	// note claims repeats that never happened.
	one := cfg
	one.MaxAttempts = 1
	if d := one.Decide(ToolResult{Tool: "web_fetch", Attempt: 1, Failure: reset}); d.Outcome != ToolAttemptsExhausted || d.Note != "" {
		t.Errorf("maxAttempts 1: %+v", d)
	}
}

// Through Step: the verdict and the effect agree with Decide, and a tool call
// leaves no trace in the state (no agents, no breakers).
func TestStepToolResult(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Tools.Retry = []string{"web_fetch"}
	reset := &ToolFailure{Message: "socket hang up"}
	tests := []struct {
		name    string
		ev      ToolResult
		verdict VerdictKind
		effect  *ToolRetried
	}{
		{"a repeat is scheduled and reported", ToolResult{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 1, Failure: reset, Rand: 0},
			RetryTool, &ToolRetried{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 1, Outcome: ToolRetry, Cause: ToolCauseSocket, DelayMs: 250}},
		{"exhaustion is reported", ToolResult{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 3, Failure: reset},
			ReturnTool, &ToolRetried{Agent: "a1", Call: "c1", Tool: "web_fetch", Attempt: 3, Outcome: ToolAttemptsExhausted, Cause: ToolCauseSocket}},
		{"a success after repeats is reported", ToolResult{Call: "c1", Tool: "web_fetch", Attempt: 2},
			ReturnTool, &ToolRetried{Call: "c1", Tool: "web_fetch", Attempt: 2, Outcome: ToolSucceeded}},
		{"a first-time success is not", ToolResult{Call: "c2", Tool: "web_fetch", Attempt: 1}, ReturnTool, nil},
		{"an undeclared failure is not", ToolResult{Call: "c3", Tool: "bash", Attempt: 1, Failure: reset}, ReturnTool, nil},
		{"a first-attempt permanent failure is not", ToolResult{Call: "c4", Tool: "web_fetch", Attempt: 1,
			Failure: &ToolFailure{Code: "INVALID_ARGS"}}, ReturnTool, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewState(cfg)
			if err != nil {
				t.Fatal(err)
			}
			out := Step(s, 1_000, tt.ev)
			if out.Verdict.Kind != tt.verdict {
				t.Errorf("verdict %s, want %s", out.Verdict.Kind, tt.verdict)
			}
			if want := cfg.Tools.Decide(tt.ev); !reflect.DeepEqual(out.Verdict.Tool, want) {
				t.Errorf("verdict decision %+v, want Decide's %+v", out.Verdict.Tool, want)
			}
			var got []ToolRetried
			for _, fx := range out.Effects {
				if r, ok := fx.(ToolRetried); ok {
					got = append(got, r)
				}
			}
			switch {
			case tt.effect == nil && len(got) != 0:
				t.Errorf("effects %+v, want none", got)
			case tt.effect != nil && (len(got) != 1 || got[0] != *tt.effect):
				t.Errorf("effects %+v, want %+v", got, *tt.effect)
			}
			if s.agents.len() != 0 || len(s.Health()) != 0 {
				t.Errorf("a tool call left state behind: %d agents, health %+v", s.agents.len(), s.Health())
			}
		})
	}
}
