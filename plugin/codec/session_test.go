package codec

import (
	"strings"
	"testing"
)

// restore-route in, session-route and returned out: a session restored on
// its failover route goes back home, and a half-named channel is refused
// with its field's name.
func TestSessionRouteWire(t *testing.T) {
	m := new(Module)
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}]}`)); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ in, want string }{
		{`{"nowMs":5,"event":{"kind":"restore-route","agent":"s1","home":{"provider":"p","model":""}}}`, `input "event.home.model": must be a non-empty string`},
		{`{"nowMs":5,"event":{"kind":"restore-route","agent":"s1","home":{"provider":"p","model":"a"},"where":1}}`, `input "event.where": unknown key`},
		{`{"nowMs":5,"event":{"kind":"restore-route","agent":"s1","home":{"provider":"p","model":"a"}}}`, `{"verdict":{"kind":"pass"},"effects":[]}`},
		{`{"nowMs":6,"event":{"kind":"request","agent":"s1","proposed":{"provider":"p","model":"b"}}}`,
			`{"verdict":{"kind":"swap","provider":"p","model":"a"},"effects":[{"kind":"returned","agent":"s1","from":{"provider":"p","model":"b"},"to":{"provider":"p","model":"a"}`}, // then its audit (audit_test.go)
		{`{"nowMs":7,"event":{"kind":"request","agent":"s1","proposed":{"provider":"p","model":"a"}}}`, `{"verdict":{"kind":"pass"},"effects":[]}`},
		// The user picks B: it is home now.
		{`{"nowMs":8,"event":{"kind":"request","agent":"s1","proposed":{"provider":"p","model":"b"}}}`,
			`{"verdict":{"kind":"pass"},"effects":[{"kind":"session-route","agent":"s1","home":{"provider":"p","model":"b"},"pick":{"provider":"p","model":"b"}`},
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
