package policy

import (
	"strconv"
	"testing"
)

// Finished agents are forgotten oldest first beyond maxIdleAgents, so a host
// that never says Disposed stays bounded; agents with a request in flight, or
// a failure the host will report again, are never forgotten, however many
// agents come and go meanwhile.
func TestAgentTable(t *testing.T) {
	tests := []struct {
		name     string
		disposed bool
	}{{"settled only", false}, {"settled and disposed", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, nil)
			// Two long-lived agents: one in flight, one deferred to the host's retries.
			m.request("flying", chA)
			m.request("deferred", chA)
			expect(t, m.fail("deferred", BeforeHost, "SERVER", "", llmRetry), Defer)
			for i := range 5 * maxIdleAgents {
				m.advance(1)
				id := "a" + strconv.Itoa(i)
				m.request(id, chA)
				m.step(Settled{Agent: id})
				if tt.disposed {
					m.step(Disposed{Agent: id})
				}
			}
			if n := m.s.agents.len(); n > maxIdleAgents+2 {
				t.Fatalf("%d agents kept", n)
			}
			// Both failures still know their channel: the deferred one fails
			// over after the host's retries, the flying one is waited on.
			out := m.fail("deferred", AfterHost, "SERVER", "", llmRetry)
			expect(t, out, Retry, "circuit:closed>open", "failover:p/b")
			out = m.fail("flying", AfterHost, "SERVER", "", llmRetry)
			if out.Verdict.Kind == Delegate && out.Verdict.Reason == UnknownChannel {
				t.Fatalf("an agent in flight was forgotten: %+v", out)
			}
		})
	}
}

// A busy agent is evicted only when it is both stale (silent a day: its host
// died mid-call) and beyond maxBusyAgents.
func TestAgentTableStaleBusy(t *testing.T) {
	var tab = newAgentTable()
	for i := range maxBusyAgents + 10 {
		a := tab.get(strconv.Itoa(i), 0)
		a.inFlight = true
		tab.place(a)
	}
	if tab.len() != maxBusyAgents+10 {
		t.Fatalf("fresh busy agents evicted: %d", tab.len())
	}
	a := tab.get("late", staleBusyMs)
	a.inFlight = true
	tab.place(a)
	if tab.busy.n != maxBusyAgents || tab.lookup("late") == nil {
		t.Fatalf("busy %d, late %v", tab.busy.n, tab.lookup("late"))
	}
}

// The busy list is in the order agents became busy. One busy the longest
// but still at work (seen since) does not shield the stale ones behind it,
// and is not evicted itself: each step moves up to busyTurns of them to the
// back, so a stale one comes to the front within a few steps.
func TestAgentTableStaleBehindLiveBusy(t *testing.T) {
	var tab = newAgentTable()
	for i := range maxBusyAgents {
		a := tab.get(strconv.Itoa(i), 0)
		a.inFlight = true
		tab.place(a)
	}
	now := int64(staleBusyMs)
	for _, id := range []string{"0", "1", "2"} { // busy the longest, and at work
		a := tab.get(id, now)
		a.pending = true
		tab.place(a)
	}
	a := tab.get("new", now)
	a.inFlight = true
	tab.place(a)
	a = tab.get("new", now+1) // its next step: three live ones took two steps' turns
	tab.place(a)
	if tab.busy.n != maxBusyAgents {
		t.Fatalf("busy %d: a stale agent behind the live ones was kept", tab.busy.n)
	}
	for _, id := range []string{"0", "1", "2", "new"} {
		if tab.lookup(id) == nil {
			t.Fatalf("%s, seen now, was evicted", id)
		}
	}
}
