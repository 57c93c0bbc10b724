package redact

import (
	"strings"
	"testing"
)

func TestText(t *testing.T) {
	const key = "fake-key-0123" // a configured credential's value: no shape of its own
	r := New([]string{key, "abc", "  "})
	for _, c := range []struct{ name, in, want string }{
		{"configured value", "Authentication Fails, your key fake-key-0123 is invalid",
			"Authentication Fails, your key [redacted] is invalid"},
		{"configured value twice, in JSON", `{"error":"bad key fake-key-0123","echo":"fake-key-0123"}`,
			`{"error":"bad key [redacted]","echo":"[redacted]"}`},
		{"OpenAI/DeepSeek sk- key", "Incorrect API key provided: sk-proj-4f9XaB12cdEF34ghIJ56. You can find your API key at …",
			"Incorrect API key provided: [redacted]. You can find your API key at …"},
		{"already masked by the provider", "Your api key: ****abcd is invalid", "Your api key: ****abcd is invalid"},
		{"Bearer token", "upstream said: Bearer 9f8e7d6c5b4a3f2e1d0c rejected", "upstream said: Bearer [redacted] rejected"},
		{"Authorization header echoed", "request headers: Authorization: Bearer tok_live_51H8xyzABCdef, Accept: */*",
			"request headers: Authorization: Bearer [redacted], Accept: */*"},
		{"Authorization without a scheme", `{"authorization":"s3cr3tValue"}`, `{"authorization":"[redacted]"}`},
		{"escaped JSON header", `{\"Authorization\": \"Bearer abcdefgh12345678\"}`, `{\"Authorization\": \"Bearer [redacted]\"}`},
		{"query api_key", "GET /v1/models?api_key=AbC123xyz&limit=5 failed", "GET /v1/models?api_key=[redacted]&limit=5 failed"},
		{"x-api-key header", "x-api-key: 0123456789 refused", "x-api-key: [redacted] refused"},
		{"apikey field", "apikey=hunter22", "apikey=[redacted]"},
		{"password field", "redis AUTH failed: password=p4ss;", "redis AUTH failed: password=[redacted];"},
		{"AWS access key id", "The security token included in the request is invalid: AKIAIOSFODNN7EXAMPLE.",
			"The security token included in the request is invalid: [redacted]."},
		{"AWS id inside a longer word stays", "XAKIAIOSFODNN7EXAMPLEZ", "XAKIAIOSFODNN7EXAMPLEZ"},
		{"JWT", "token expired: eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U (exp)",
			"token expired: [redacted] (exp)"},
		{"hex after key word", "invalid key 3f2a9c0d8e7b6a5f4e3d2c1b0a998877", "invalid key [redacted]"},
		{"base64 after secret word", "client secret=QWxhZGRpbjpvcGVuIHNlc2FtZQ== rejected", "client secret=[redacted] rejected"},
		{"camelCase apiKey", `{"apiKey": "Zx9Yw8Vu7Ts6Rq5Po4"}`, `{"apiKey": "[redacted]"}`},
		{"session_token", "session_token=AbCdEf0123456789GhIj", "session_token=[redacted]"},
		{"a key word before prose stays", "the key you sent is not valid for this model", "the key you sent is not valid for this model"},
		{"a short token after key stays", "rate limit for key tier2 reached", "rate limit for key tier2 reached"},
		{"a reset time stays", "quota exceeded; resets at 2026-12-06T08:00:00Z (in 3 hours)", "quota exceeded; resets at 2026-12-06T08:00:00Z (in 3 hours)"},
		{"a short configured value stays", "abc is fine", "abc is fine"},
		{"task- is not sk-", "task-0123456789abcdefghij failed", "task-0123456789abcdefghij failed"},
		{"empty", "", ""},
		{"a field at the very end", "the key:", "the key:"},
		{"a key word at the very end", "bad api key", "bad api key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := r.Text(c.in)
			if got != c.want {
				t.Fatalf("Text(%q)\n got %q\nwant %q", c.in, got, c.want)
			}
			if again := r.Text(got); again != got {
				t.Fatalf("not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestNewKeepsLongValuesOnce(t *testing.T) {
	r := New([]string{"short", "long-enough", "long-enough", " long-enough-too ", ""})
	if r.Len() != 2 {
		t.Fatalf("held %d values, want 2: %v", r.Len(), r.values)
	}
	// The longer value goes first: a value holding another is replaced whole.
	if got := r.Text("long-enough-too"); got != Marker {
		t.Fatalf("got %q", got)
	}
	many := make([]string, MaxValues+10)
	for i := range many {
		many[i] = strings.Repeat("v", MinValueLen) + string(rune('a'+i%26)) + strings.Repeat("w", i/26)
	}
	if n := New(many).Len(); n != MaxValues {
		t.Fatalf("held %d, want %d", n, MaxValues)
	}
}

func FuzzText(f *testing.F) {
	f.Add("Authorization: Bearer sk-abcdefghijklmnop1234", "sk-abcdefghijklmnop1234")
	f.Add(`{"api_key":"x"}`, "")
	f.Add("the key:", "")
	f.Fuzz(func(t *testing.T, s, v string) {
		r := New([]string{v})
		got := r.Text(s)
		if again := r.Text(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", s, got, again)
		}
		if r.Len() == 1 && strings.Contains(got, strings.TrimSpace(v)) && !strings.Contains(Marker, strings.TrimSpace(v)) {
			t.Fatalf("value %q left in %q", v, got)
		}
	})
}
