package codec

import (
	"strings"
	"testing"
)

// The hedge's wire: the row's keys resolved and refused by name, the
// decision on a watch verdict, the race's end as an effect.
func TestHedgeWire(t *testing.T) {
	var m Module
	out, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"q","model":"b"}],"hedge":{"afterMs":2000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if want := `"hedge":{"afterMs":2000,"afterPercentile":0,"minMs":1000,"maxMs":30000,"budgetPercent":5,"budgetFloor":1}`; !strings.Contains(string(out), want) {
		t.Fatalf("resolved %s, want %s", out, want)
	}
	steps := []struct{ in, want string }{
		{`{"nowMs":1000000,"event":{"kind":"request","agent":"s1","proposed":{"provider":"p","model":"a"}}}`, `"kind":"pass"`},
		{`{"nowMs":1000000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1000000,"chunks":0,"cancelled":false,"agent":"s1"}}`,
			`"verdict":{"kind":"watch","atMs":1002000}`},
		{`{"nowMs":1002000,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1000000,"chunks":0,"cancelled":false,"agent":"s1","reasoningEffort":"high"}}`,
			`"verdict":{"kind":"watch","atMs":1180000,"hedge":{"provider":"q","model":"b","dropReasoningEffort":true,"afterMs":2000,"reason":"hedge.afterMs"}}`},
		{`{"nowMs":1002500,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1000000,"chunks":0,"cancelled":false,"agent":"s1","hedging":true}}`,
			`"verdict":{"kind":"watch","atMs":1180000}`},
		{`{"nowMs":1003000,"event":{"kind":"hedge-result","agent":"s1","winner":"hedge","openedMs":1000000,"firstTokenMs":900}}`,
			`{"kind":"hedge","agent":"s1","from":{"provider":"p","model":"a"},"to":{"provider":"q","model":"b"},"afterMs":2000,"reason":"hedge.afterMs","winner":"hedge","firstTokenMs":3000,"loserWaitMs":3000,"audit":`},
	}
	for _, s := range steps {
		got, err := m.Decide([]byte(s.in))
		if err != nil || !strings.Contains(string(got), s.want) {
			t.Fatalf("%s:\n got %s (%v)\nwant %s", s.in, got, err, s.want)
		}
	}
}

func TestHedgeWireErrors(t *testing.T) {
	for _, tc := range []struct{ config, err string }{
		{`{"hedge":{"afterMs":"soon"}}`, `"hedge.afterMs"`},
		{`{"hedge":{"afterMs":2000,"afterPercentile":95}}`, `"hedge.afterMs": set afterMs or afterPercentile, not both`},
		{`{"hedge":{"afterPercentile":100}}`, `"hedge.afterPercentile"`},
		{`{"hedge":{"after":2000}}`, `hedge.after`},
		{`{"hedge":{"minMs":5000,"maxMs":1000}}`, `"hedge.maxMs"`},
	} {
		var m Module
		if _, err := m.Configure([]byte(tc.config)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error naming %s", tc.config, err, tc.err)
		}
	}
	var m Module
	if _, err := m.Configure([]byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ in, err string }{
		{`{"nowMs":1,"event":{"kind":"hedge-result","agent":"s1","winner":"both","openedMs":1}}`, `event.winner`},
		{`{"nowMs":1,"event":{"kind":"hedge-result","agent":"s1","winner":"hedge","openedMs":1}}`, `event.firstTokenMs`},
		{`{"nowMs":1,"event":{"kind":"hedge-result","agent":"s1","winner":"none","openedMs":1}}`, `event.end`},
		{`{"nowMs":1,"event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":1,"chunks":0,"cancelled":false,"hedging":"yes"}}`, `event.hedging`},
	} {
		if _, err := m.Decide([]byte(tc.in)); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error naming %s", tc.in, err, tc.err)
		}
	}
}

// The module says whether a config hedges, so the web page need not derive it.
func TestConfiguredSaysWhetherItHedges(t *testing.T) {
	for row, want := range map[string]string{
		`{}`:                               `"hedging":false`,
		`{"hedge":{"afterMs":2000}}`:       `"hedging":true`,
		`{"hedge":{"afterPercentile":95}}`: `"hedging":true`,
		`{"hedge":{"budgetPercent":10}}`:   `"hedging":false`,
	} {
		out, err := Resolve([]byte(row))
		if err != nil || !strings.HasSuffix(string(out), want+"}") {
			t.Errorf("%s: %s (%v), want it to end %s", row, out, err, want)
		}
	}
}
