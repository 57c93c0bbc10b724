package codec

import (
	"encoding/json"
	"testing"
)

// The balance-output export reads the JSON and the time; the rule is policy's.
func TestBalanceOutput(t *testing.T) {
	for _, tc := range []struct {
		text string
		want string
	}{
		{`{"remaining": 12.5}`, `{"reading":{"provider":"p","ok":true,"remaining":12.5}}`},
		{`{"remaining": 1, "resetsAt": "2030-01-01T00:00:00Z"}`, `{"reading":{"provider":"p","ok":true,"remaining":1,"resetsAtMs":1893456000000}}`},
		{`{"remaining": 1, "resetsAt": "2030-01-01"}`, `{"reading":{"provider":"p","ok":true,"remaining":1,"resetsAtMs":1893456000000}}`},
		{`{"remaining": 1, "error": ""}`, `{"reading":{"provider":"p","ok":true,"remaining":1}}`},
		{`{"remaining": 1, "error": false}`, `{"reading":{"provider":"p","ok":true,"remaining":1}}`},
		{`{"remaining": 80, "error": "quota endpoint said 401"}`, `{"reading":{"provider":"p","ok":false},"why":"provider refused"}`},
		{`{"remaining": 80, "error": true}`, `{"reading":{"provider":"p","ok":false},"why":"provider refused"}`},
		{`{"remaining": 1, "resetsAt": 5}`, `{"reading":{"provider":"p","ok":false},"why":"bad resetsAt"}`},
		{`{"remaining": 1, "resetsAt": "1969-12-31T00:00:00Z"}`, `{"reading":{"provider":"p","ok":false},"why":"bad resetsAt"}`},
		{`{"remaining": 1e999}`, `{"reading":{"provider":"p","ok":false},"why":"no numeric remaining"}`},
		{`plenty`, `{"reading":{"provider":"p","ok":false},"why":"not JSON"}`},
		{`[{"remaining": 1}]`, `{"reading":{"provider":"p","ok":false},"why":"not JSON"}`},
	} {
		in, _ := json.Marshal(map[string]string{"provider": "p", "text": tc.text})
		out, err := BalanceOutput(in)
		if err != nil || string(out) != tc.want {
			t.Errorf("%s: %s %v, want %s", tc.text, out, err, tc.want)
		}
	}
	for _, bad := range []string{`{"provider": "p"}`, `{"text": "{}"}`, `{"provider": "p", "text": "{}", "extra": 1}`} {
		if _, err := BalanceOutput([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
