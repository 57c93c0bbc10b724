package codec

import (
	"strings"
	"testing"
)

// fields reads an object in one pass and must answer as the per-key Get it
// replaced: the first of duplicate keys, unknown keys named with their path,
// a non-object named as one.
func TestFieldsAnswersAsGet(t *testing.T) {
	m := new(Module)
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}]}`)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		// The first nowMs and the first agent win, as gjson's Get finds them.
		{`{"nowMs":5,"nowMs":"x","event":{"kind":"request","agent":"a1","agent":7,"proposed":{"provider":"p","model":"a"}}}`, `{"verdict":{"kind":"pass"},"effects":[]}`},
		{`{"nowMs":5,"event":{"kind":"request","agent":"a1","proposed":{"provider":"p","model":"a","x":1}}}`, `input "event.proposed.x": unknown key (known: [provider model])`},
		{`{"nowMs":5,"event":{"kind":"settled","agent":"a1","extra":true}}`, `input "event.extra": unknown key (known: [kind agent])`},
		{`{"nowMs":5,"event":{"kind":"request-error","agent":"a1","provider":"p","phase":"before-host","rand":0,"failure":[]}}`, `input "event.failure": must be an object`},
		{`{"nowMs":5,"when":1,"event":{"kind":"wake"}}`, `input "when": unknown key (known: [nowMs event])`},
		{`[1]`, `input "(root)": must be an object`},
	} {
		out, err := m.Decide([]byte(tt.in))
		got := string(out)
		if err != nil {
			got = err.Error()
		}
		if !strings.HasPrefix(got, tt.want) {
			t.Errorf("%s\n got  %s\n want %s", tt.in, got, tt.want)
		}
	}
}
