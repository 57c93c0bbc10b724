package telemetry

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

const at = `"at":"2026-12-01T10:00:00.000Z"`
const atMs = 1796119200000

// attrs writes a record's attributes as k=v lines, a number marked #.
func attrs(r Record) string {
	var b strings.Builder
	for _, a := range r.Attrs {
		b.WriteString(a.Key)
		if a.Number {
			b.WriteString("=#")
		} else {
			b.WriteString("=")
		}
		b.WriteString(a.Value)
		b.WriteString("\n")
	}
	return b.String()
}

// Each record type that reaches the seam, with its severity and every
// attribute in order; types that are no alerting signal reach nothing.
func TestOf(t *testing.T) {
	const p = `{"provider":"deepseek-official","model":"deepseek-v4-flash"}`
	const s = `{"provider":"mock","model":"mock-b"}`
	cases := []struct {
		name, rec string
		severity  Severity
		want      string // "" for none
	}{
		{"a failover: session, both channels, code and class",
			`{` + at + `,"type":"failover","agent":"s-1","from":` + p + `,"to":` + s + `,"code":"RATE_LIMIT","class":"transient"}`, Info,
			"telemetry.op=dsh-resilience.failover\nresilience.type=failover\nsession.id=s-1\nagent.id=s-1\n" +
				"from.provider=deepseek-official\nfrom.model=deepseek-v4-flash\nto.provider=mock\nto.model=mock-b\nerror.code=RATE_LIMIT\nerror.class=transient\n"},
		{"a circuit open: warn, its channel, previous state, cause and open time",
			`{` + at + `,"type":"circuit-open","channel":` + p + `,"from":"closed","cause":"failures","class":"quota","openUntil":"2026-12-01T10:01:00.000Z"}`, Warn,
			"telemetry.op=dsh-resilience.circuit-open\nresilience.type=circuit-open\nchannel.provider=deepseek-official\nchannel.model=deepseek-v4-flash\n" +
				"error.class=quota\nresilience.cause=failures\ncircuit.from=closed\ncircuit.open_until=2026-12-01T10:01:00.000Z\n"},
		{"a hedge: both channels, who won, the delay, what it saved and what the loser cost",
			`{` + at + `,"type":"hedge","agent":"s","from":{"provider":"p","model":"a"},"to":{"provider":"q","model":"b"},"afterMs":2000,"reason":"hedge.afterMs","winner":"hedge","firstTokenMs":2500,"loserWaitMs":2500,"savedMs":17500}`, Info,
			"telemetry.op=dsh-resilience.hedge\nresilience.type=hedge\nsession.id=s\nagent.id=s\nfrom.provider=p\nfrom.model=a\nto.provider=q\nto.model=b\n" +
				"resilience.reason=hedge.afterMs\nhedge.winner=hedge\nhedge.after_ms=#2000\nhedge.loser_wait_ms=#2500\nhedge.saved_ms=#17500\n"},
		{"a give-up is error", `{` + at + `,"type":"give-up","agent":"s","channel":` + p + `,"reason":"budget-exhausted","code":"QUOTA","turn":3,"step":"x"}`, Error,
			"telemetry.op=dsh-resilience.give-up\nresilience.type=give-up\nsession.id=s\nagent.id=s\nchannel.provider=deepseek-official\nchannel.model=deepseek-v4-flash\n" +
				"error.code=QUOTA\nresilience.reason=budget-exhausted\nturn=#3\n"},
		{"a return keeps its text channels, and its from is no breaker state",
			`{` + at + `,"type":"return","agent":"s","from":"mock/mock-b","to":"deepseek-official/deepseek-v4-flash"}`, Info,
			"telemetry.op=dsh-resilience.return\nresilience.type=return\nsession.id=s\nagent.id=s\nfrom=mock/mock-b\nto=deepseek-official/deepseek-v4-flash\n"},
		{"a stall names its route",
			`{` + at + `,"type":"stall","route":` + p + `,"bound":"first-chunk","silenceMs":2000,"limitMs":2000,"chunks":0}`, Info,
			"telemetry.op=dsh-resilience.stall\nresilience.type=stall\nchannel.provider=deepseek-official\nchannel.model=deepseek-v4-flash\n" +
				"stall.bound=first-chunk\nstall.silence_ms=#2000\nstall.limit_ms=#2000\nstall.chunks=#0\n"},
		{"a spill: both channels as text, its code and the failures that made it",
			`{` + at + `,"type":"spill","agent":"s","from":"deepseek-official/deepseek-v4-flash","to":"mock/mock-b","code":"SERVER","failures":2}`, Info,
			"telemetry.op=dsh-resilience.spill\nresilience.type=spill\nsession.id=s\nagent.id=s\nfrom=deepseek-official/deepseek-v4-flash\nto=mock/mock-b\nerror.code=SERVER\nresilience.failures=#2\n"},
		{"only strings and numbers are attributes",
			`{` + at + `,"type":"tool-retry","agent":"s","tool":"t","call":"c1","attempt":2,"reason":{"x":1},"delayMs":1e999,"weird":{"x":1}}`, Info,
			"telemetry.op=dsh-resilience.tool-retry\nresilience.type=tool-retry\nsession.id=s\nagent.id=s\nresilience.attempt=#2\ntool.name=t\ntool.call_id=c1\n"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := Of(gjson.Parse(tt.rec), 7)
			if !ok {
				t.Fatal("no seam record")
			}
			if r.Severity != tt.severity || r.TimeMs != atMs {
				t.Fatalf("severity %s at %d, want %s at %d", r.Severity, r.TimeMs, tt.severity, int64(atMs))
			}
			if got := attrs(r); got != tt.want {
				t.Fatalf("attributes:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
	for _, typ := range []string{"boot", "input", "stop", "probe", "balance", "notify-failed", "health-merged", ""} {
		if _, ok := Of(gjson.Parse(`{"type":"`+typ+`"}`), 0); ok {
			t.Errorf("%q reached telemetry", typ)
		}
	}
	if r, _ := Of(gjson.Parse(`{"type":"failover","at":"yesterday"}`), 7); r.TimeMs != 7 {
		t.Errorf("a record without a readable time is now's: %d", r.TimeMs)
	}
}

// The severities: a give-up is an error, an open breaker a warning, every
// other decision a trace; the types are listed sorted for the shim.
func TestSeverities(t *testing.T) {
	for typ, s := range Severities {
		want := Info
		switch typ {
		case "give-up":
			want = Error
		case "circuit-open":
			want = Warn
		}
		if s != want {
			t.Errorf("%s: %s, want %s", typ, s, want)
		}
	}
	types := Types()
	if len(types) != len(Severities) || types[0] != "circuit-closed" {
		t.Fatalf("types: %v", types)
	}
}

// Any record maps without panicking, and every attribute it gives is a
// string or a JSON number.
func FuzzOf(f *testing.F) {
	f.Add(`{"type":"failover","agent":"s","from":{"provider":"p","model":"m"},"to":"q/n","attempt":2}`)
	f.Add(`{"type":"circuit-open","channel":null,"route":{"provider":1},"from":"closed","turn":1e999}`)
	f.Add(`{"type":["give-up"]}`)
	f.Fuzz(func(t *testing.T, rec string) {
		if !gjson.Valid(rec) {
			return // the codec takes valid JSON only (parse)
		}
		r, ok := Of(gjson.Parse(rec), 0)
		if !ok {
			return
		}
		for _, a := range r.Attrs {
			if a.Number && !gjson.Valid(a.Value) {
				t.Fatalf("%s: %q is no JSON number", a.Key, a.Value)
			}
		}
	})
}
