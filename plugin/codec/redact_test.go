package codec

import (
	"strings"
	"testing"
)

// Provider text is redacted as it enters the module: the original failure a
// give-up hands back, and every effect's code, hold no credential; the values
// are in no answer and no snapshot.
func TestDecideRedactsProviderText(t *testing.T) {
	const key = "fake-key-literal-7"
	secrets := []string{
		key,
		"sk-4f9XaB12cdEF34ghIJ56kl",
		"AKIAIOSFODNN7EXAMPLE",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
		"tok9f8e7d6c5b4a3f2e1d0c",  // after Bearer
		"hunter2secret",            // after api_key=
		"3f2a9c0d8e7b6a5f4e3d2c1b", // after "key "
	}
	message := "401: key " + key + " refused; Authorization: Bearer tok9f8e7d6c5b4a3f2e1d0c; api_key=hunter2secret; " +
		"sk-4f9XaB12cdEF34ghIJ56kl AKIAIOSFODNN7EXAMPLE eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N " +
		"invalid key 3f2a9c0d8e7b6a5f4e3d2c1b"
	var m Module
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"q","model":"b"}]}`)); err != nil {
		t.Fatal(err)
	}
	held, err := m.Secrets([]byte(`{"values":["` + key + `","short"]}`))
	if err != nil || string(held) != `{"held":1}` {
		t.Fatalf("secrets: %s %v", held, err)
	}
	step := func(in string) string {
		t.Helper()
		out, err := m.Decide([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	var outs []string
	outs = append(outs, step(`{"nowMs":1000,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a"}}}`))
	failure := `{"code":"AUTH","message":` + string(appendString(nil, message)) + `,"status":401}`
	outs = append(outs, step(`{"nowMs":1001,"event":{"kind":"request-error","agent":"a1","provider":"p","failure":`+failure+`,"phase":"before-host","rand":0}}`))
	outs = append(outs, step(`{"nowMs":1002,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a"}}}`))
	// The target cannot be served: the turn ends with the failure that moved it (the original).
	outs = append(outs, step(`{"nowMs":1003,"event":{"kind":"request-error","agent":"a1","provider":"q","failure":{"code":"NO_ADAPTER"},"phase":"after-host","rand":0}}`))
	// A code is the provider's words too, when an adapter passes them on.
	outs = append(outs, step(`{"nowMs":1003,"event":{"kind":"request","agent":"a2","proposed":{"provider":"q","model":"b"}}}`))
	outs = append(outs, step(`{"nowMs":1003,"event":{"kind":"request-error","agent":"a2","provider":"q","failure":{"code":"Bearer `+secrets[4]+`"},"phase":"after-host","rand":0}}`))
	outs = append(outs, step(`{"nowMs":1004,"event":{"kind":"probe-result","channel":{"provider":"p","model":"a"},"ok":false,"failure":`+failure+`}}`))
	snap, err := m.Snapshot(nil)
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, string(snap))
	all := strings.Join(outs, "\n")
	for _, s := range secrets {
		if strings.Contains(all, s) {
			t.Errorf("%q left in the module's answers:\n%s", s, all)
		}
	}
	if !strings.Contains(all, "[redacted]") {
		t.Fatalf("no redacted text came back at all; the outputs:\n%s", all)
	}
	// The step's answer says what the module took when redaction changed it, and only then.
	if !strings.Contains(outs[1], `"redacted":{"code":"AUTH","message":"401: key [redacted] refused; Authorization: Bearer [redacted];`) {
		t.Errorf("the failure as taken is not in the answer: %s", outs[1])
	}
	if strings.Contains(outs[0], "redacted") || strings.Contains(outs[3], `"redacted"`) {
		t.Errorf("an answer names a redaction that did not happen: %s / %s", outs[0], outs[3])
	}
	red, err := m.Redact([]byte(`{"texts":[` + string(appendString(nil, message)) + `,"plain words"]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.Contains(string(red), s) {
			t.Errorf("redact left %q: %s", s, red)
		}
	}
	if !strings.Contains(string(red), `"plain words"`) || !strings.Contains(string(red), "refused; Authorization: Bearer [redacted]") {
		t.Errorf("redact changed more than the secrets: %s", red)
	}
}

// The inputs are checked, naming the field and never a value.
func TestSecretsAndRedactInputs(t *testing.T) {
	var m Module
	for _, c := range []struct{ export, in, want string }{
		{"secrets", `{"values":[1]}`, "values[0]"},
		{"secrets", `{"values":["` + strings.Repeat("s", maxSecretLen+1) + `"]}`, "longer than"},
		{"secrets", `{"value":[]}`, "unknown key"},
		{"redact", `{"texts":[null]}`, "texts[0]"},
		{"redact", `{"texts":[` + strings.TrimSuffix(strings.Repeat(`"a",`, maxRedactTexts+1), ",") + `]}`, "more than"},
	} {
		_, err := m.Call(c.export, []byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: got %v, want an error naming %q", c.export, c.in[:min(len(c.in), 40)], err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "ssssss") {
			t.Errorf("the error names the value: %v", err)
		}
	}
}
