package codec

import "testing"

// quota-projection's wire: the fold's nulls read as not set, a pool of none
// written as null (the projection's format has the key), a route with a
// blank part matching nothing rather than refused, a stray key refused.
func TestQuotaProjectionWire(t *testing.T) {
	m := new(Module)
	if _, err := m.QuotaProjection([]byte(`{}`)); err != ErrNotConfigured {
		t.Fatalf("before configure: %v", err)
	}
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"}],"pools":[{"name":"main","routes":[{"provider":"p","model":"a"}]}]}`)); err != nil {
		t.Fatal(err)
	}
	const none = `"pool":null,"poolSource":"default","pools":["main"]}`
	for _, tt := range []struct{ in, want string }{
		{`{"quota":null,"pool":null,"route":null}`, `{"enabled":true,"defaultEnabled":true,"source":"default",` + none},
		{`{}`, `{"enabled":true,"defaultEnabled":true,"source":"default",` + none},
		{`{"quota":"off","route":{"provider":"p","model":"a"}}`,
			`{"enabled":false,"defaultEnabled":true,"source":"session","pool":"main","poolSource":"default","pools":["main"]}`},
		{`{"pool":"off","route":{"provider":"p","model":"a"}}`,
			`{"enabled":true,"defaultEnabled":true,"source":"default","pool":null,"poolSource":"off","pools":["main"]}`},
		{`{"pool":"main"}`, `{"enabled":true,"defaultEnabled":true,"source":"default","pool":"main","poolSource":"session","pools":["main"]}`},
		{`{"route":{"provider":"p","model":""}}`, `{"enabled":true,"defaultEnabled":true,"source":"default",` + none},
		{`{"quota":"maybe"}`, `input "input.quota": must be one of [on off default], not "maybe"`},
		{`{"poolDefault":true}`, `input "poolDefault": unknown key (known: [quota pool route])`},
	} {
		out, err := m.QuotaProjection([]byte(tt.in))
		got := string(out)
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s\n got  %s\n want %s", tt.in, got, tt.want)
		}
	}
}
