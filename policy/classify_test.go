package policy

import "testing"

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		f    Failure
		want Class
	}{
		{"rate limit", Failure{Code: "RATE_LIMIT", Message: "429: Rate limit reached for requests", Status: 429}, ClassTransient},
		{"server", Failure{Code: "SERVER", Status: 500}, ClassTransient},
		{"transport reset", Failure{Code: "TRANSPORT", Message: "fetch failed"}, ClassTransient},
		{"timeout", Failure{Code: "TIMEOUT"}, ClassTransient},
		{"empty response", Failure{Code: "EMPTY_RESPONSE"}, ClassTransient},
		{"stream closed", Failure{Code: "STREAM_CLOSED", Message: "SSE stream ended without [DONE]"}, ClassTransient},
		{"host quota", Failure{Code: "QUOTA", Message: "mock insufficient quota"}, ClassQuota},
		{"bare 402 through deepseek", Failure{Code: "HTTP_402", Status: 402}, ClassQuota},
		{"402 status, unknown code", Failure{Code: "PI_AI_ERROR", Status: 402}, ClassQuota},
		{"429 with english usage cap", Failure{Code: "RATE_LIMIT", Message: "You have reached your usage limit for this billing period", Status: 429}, ClassQuota},
		{"429 with chinese usage cap", Failure{Code: "RATE_LIMIT", Message: "已达到 Token Plan 用量上限，请稍后再试", Status: 429}, ClassQuota},
		{"chinese balance", Failure{Code: "PI_AI_ERROR", Message: "账户余额不足"}, ClassQuota},
		{"chinese credits", Failure{Code: "SERVER", Message: "积分不足"}, ClassQuota},
		{"403 spent window", Failure{Code: "AUTH", Message: "You have used up your 5-hour usage window", Status: 403}, ClassQuota},
		{"plain auth: the key, per provider", Failure{Code: "AUTH", Message: "invalid api key", Status: 401}, ClassModelUnavailable},
		{"invalid credential", Failure{Code: "INVALID_CREDENTIAL"}, ClassModelUnavailable},
		{"bad request", Failure{Code: "INVALID_REQUEST", Status: 400}, ClassPermanent},
		{"context overflow", Failure{Code: "CONTEXT_WINDOW_EXCEEDED"}, ClassPermanent},
		{"aborted, whatever it says", Failure{Code: "ABORTED", Message: "quota exceeded"}, ClassPermanent},
		{"unknown model", Failure{Code: "UNKNOWN_MODEL"}, ClassModelUnavailable},
		{"no adapter", Failure{Code: "NO_ADAPTER"}, ClassModelUnavailable},
		{"missing credential", Failure{Code: "MISSING_CREDENTIAL"}, ClassModelUnavailable},
		{"pi-ai model gone wording", Failure{Code: "PI_AI_ERROR", Message: "404 The model `x` does not exist"}, ClassModelUnavailable},
		{"unknown code, 503", Failure{Code: "HTTP_503", Status: 503}, ClassTransient},
		{"unknown code, 404", Failure{Code: "HTTP_404", Status: 404}, ClassModelUnavailable},
		{"unknown code, 418", Failure{Code: "HTTP_418", Status: 418}, ClassPermanent},
		{"unknown everything", Failure{Code: "UNKNOWN", Message: "something odd"}, ClassUnknown},
		{"lower-case code", Failure{Code: "rate_limit"}, ClassTransient},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.f); got != tt.want {
				t.Errorf("Classify(%+v) = %s, want %s", tt.f, got, tt.want)
			}
		})
	}
}

func TestClassOverrides(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Classes = map[string]Class{"CONTEXT_WINDOW_EXCEEDED": ClassModelUnavailable} })
	m.request("a1", chA)
	expect(t, m.fail("a1", BeforeHost, "CONTEXT_WINDOW_EXCEEDED", "", nil), Retry, "circuit:closed>open", "failover:p/b")
}

// The package's closed lists go out as copies: a caller that writes into
// one changes neither what Validate accepts nor what ValidPoolName refuses.
func TestListsAreCopies(t *testing.T) {
	Classes()[0] = "bogus"
	if !validClass(ClassTransient) || Classes()[0] != ClassTransient {
		t.Fatal("writing into Classes() changed the package's list")
	}
	ReservedPoolNames()[1] = "x"
	if ok, _ := ValidPoolName("off"); ok {
		t.Fatal("writing into ReservedPoolNames() let a reserved name through")
	}
	ToolCauses()[0], ToolOutcomes()[0] = "bogus", "bogus"
	if ToolCauses()[0] != ToolCauseSocket || ToolOutcomes()[0] != ToolRetry {
		t.Fatal("writing into ToolCauses() or ToolOutcomes() changed the package's list")
	}
}
