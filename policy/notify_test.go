package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// Which effects mean a notification, about which channel, and the window
// over them: each row is an effect at a time, and the notice it gives
// (none: "").
func TestNotify(t *testing.T) {
	p := Channel{Provider: "p", Model: "m"}
	q := Channel{Provider: "q", Model: "n"}
	open := CircuitChanged{Channel: p, From: Closed, To: Open}
	type row struct {
		at   int64
		fx   Effect
		want string
	}
	tests := []struct {
		name string
		rows []row
	}{
		{"each of the four records, each its kind and channel", []row{
			{0, open, "provider-open p/m"},
			{0, GaveUp{Agent: "s", Channel: p}, "give-up p/m"},
			{0, QuotaWait{Agent: "s", Phase: WaitEntered, Provider: "q"}, "quota-wait q/*"},
			{0, Returned{Agent: "s", From: q, To: p}, "returned p/m"},
		}},
		{"other records and phases mean none", []row{
			{0, CircuitChanged{Channel: p, From: Open, To: HalfOpen}, ""},
			{0, CircuitChanged{Channel: p, From: HalfOpen, To: Closed}, ""},
			{0, QuotaWait{Agent: "s", Phase: WaitWaiting, Provider: "q"}, ""},
			{0, QuotaWait{Agent: "s", Phase: WaitLeft, Provider: "q"}, ""},
			{0, FailedOver{Agent: "s", From: p, To: q}, ""},
			{0, ScheduleWake{AtMs: 5}, ""},
		}},
		{"one per kind and channel within the window", []row{
			{0, open, "provider-open p/m"},
			{59_999, open, ""},
			{1, CircuitChanged{Channel: q, To: Open}, "provider-open q/n"},
			{1, Returned{Agent: "s", From: q, To: p}, "returned p/m"},
			{60_000, open, "provider-open p/m"},
			{60_001, open, ""},
		}},
		{"a notice held back does not move its window", []row{
			{0, GaveUp{Agent: "s", Channel: p}, "give-up p/m"},
			{30_000, GaveUp{Agent: "t", Channel: p}, ""},
			{60_000, GaveUp{Agent: "u", Channel: p}, "give-up p/m"},
		}},
		{"a provider's open and its wait are other kinds", []row{
			{0, CircuitChanged{Channel: Channel{Provider: "q", Model: "*"}, To: Open}, "provider-open q/*"},
			{0, QuotaWait{Phase: WaitEntered, Provider: "q"}, "quota-wait q/*"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := notifyingState()
			for i, r := range tt.rows {
				got := ""
				if n, ok := s.Notify(r.at, r.fx); ok {
					got = fmt.Sprintf("%s %s/%s", n.Kind, n.Channel.Provider, n.Channel.Model)
				}
				if got != r.want {
					t.Fatalf("row %d (%T at %d): %q, want %q", i, r.fx, r.at, got, r.want)
				}
			}
		})
	}
}

// The window forgets the notices whose minute has passed once it holds
// notifyKeep, and a new config's state keeps the one before it.
func TestNotifyBounded(t *testing.T) {
	s := notifyingState()
	for i := range notifyKeep + 1 {
		s.Notify(int64(i), GaveUp{Channel: Channel{Provider: "p", Model: fmt.Sprint(i)}})
	}
	if len(s.notified) != notifyKeep+1 {
		t.Fatalf("within the minute every notice is held: %d", len(s.notified))
	}
	s.Notify(NotifyWindowMs+notifyKeep, GaveUp{Channel: Channel{Provider: "p", Model: "late"}})
	if len(s.notified) != 1 {
		t.Fatalf("past the minute, only the latest is held: %d", len(s.notified))
	}
	next := notifyingState()
	next.KeepNotified(&s)
	if _, ok := next.Notify(NotifyWindowMs+notifyKeep+1, GaveUp{Channel: Channel{Provider: "p", Model: "late"}}); ok {
		t.Fatal("a new config's state forgot what went this minute")
	}
}

// notifyingState is a state whose row has one receiver of every kind.
func notifyingState() State {
	return State{cfg: Config{Notify: []NotifyTarget{{URL: "http://h/x", Events: NotifyKinds, TimeoutMs: DefaultNotifyTimeoutMs}}}}
}

// The kinds a receiver may choose are the ones docs/configuration.md lists.
func TestNotifyKindsAreDocumented(t *testing.T) {
	md, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, len(NotifyKinds))
	for i, k := range NotifyKinds {
		names[i] = "`" + string(k) + "`"
	}
	if want := "of " + strings.Join(names, ", ") + " |"; !strings.Contains(string(md), want) {
		t.Fatalf("docs/configuration.md does not list %s", want)
	}
}
