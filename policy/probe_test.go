package policy

import (
	"slices"
	"testing"
)

// A provider breaker's open time ends when it says, on a wake, probes or
// not: not at the next request that happens to touch the provider, which for
// a provider every agent avoids can be hours later (the simulator's
// provider-open-ends).
func TestProviderOpenEndsOnTheWake(t *testing.T) {
	for _, probes := range []bool{false, true} {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderThreshold = 2; c.Probes = probes })
		m.request("a1", chA)
		m.fail("a1", BeforeHost, "QUOTA", "", nil)
		m.request("a1", chA) // on b
		out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
		until := out.Effects[1].(CircuitChanged).OpenUntilMs
		var wakes []int64
		for _, fx := range out.Effects {
			if w, ok := fx.(ScheduleWake); ok {
				wakes = append(wakes, w.AtMs)
			}
		}
		if !probes && !slices.Equal(wakes, []int64{until}) {
			t.Fatalf("probes off: wakes %v, want one at the provider's open time %d", wakes, until)
		}
		m.now = until
		out = m.step(Wake{})
		var ended bool
		for _, fx := range out.Effects {
			if cc, ok := fx.(CircuitChanged); ok && cc.Channel == (Channel{"p", "*"}) {
				ended = cc.From == Open && cc.To == HalfOpen && cc.Cause == "cooled-down"
			}
		}
		if !ended {
			t.Fatalf("probes %v: the wake at the provider's open time did not end it: %v", probes, kinds(out.Effects))
		}
		if !probes {
			expect(t, out, Pass, "circuit:open>half-open")
			if _, ok := m.s.wakes.next(); ok {
				t.Fatal("probes off: something is still filed for a wake")
			}
		}
		if v := m.request("a2", Channel{"p", "z"}); v.Kind != Pass {
			t.Fatalf("probes %v: a model of the cooled-down provider: %+v, want pass", probes, v)
		}
	}
}

// A wake that comes early (a timer can fire a millisecond before its time)
// finds nothing due; it must ask for the wake again, although its time is the
// one asked for before: the timer that would have brought it has fired. Seen
// in the real host: the provider stayed open 2.8 s past its time.
func TestEarlyWakeAsksAgain(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderThreshold = 2; c.Probes = false })
	m.request("a1", chA)
	m.fail("a1", BeforeHost, "QUOTA", "", nil)
	m.request("a1", chA) // on b
	until := m.fail("a1", BeforeHost, "QUOTA", "", nil).Effects[1].(CircuitChanged).OpenUntilMs
	m.now = until - 1
	out := m.step(Wake{})
	if len(out.Effects) != 1 || out.Effects[0] != (ScheduleWake{AtMs: until}) {
		t.Fatalf("an early wake said %+v, want the wake asked for again at %d", out.Effects, until)
	}
	m.now = until
	expect(t, m.step(Wake{}), Pass, "circuit:open>half-open")
}

func TestWakeProbesDueChannelsOnce(t *testing.T) {
	m := newSim(t, func(c *Config) { c.CooldownMs = 5_000 })
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "QUOTA", "", nil)
	wake := out.Effects[len(out.Effects)-1].(ScheduleWake)
	if wake.AtMs != m.now+5_000 {
		t.Fatalf("wake at %d, want the open time %d", wake.AtMs, m.now+5_000)
	}
	m.advance(5_000)
	expect(t, m.step(Wake{}), Pass, "circuit:open>half-open", "probe:p/a")
	expect(t, m.step(Wake{}), Pass) // the slot is taken: no second probe
	if v := m.request("a2", chA); v.Kind != Swap {
		t.Fatalf("an agent got in beside the probe: %+v", v)
	}
	expect(t, m.step(ProbeResult{Channel: chA, OK: true}), Pass, "circuit:half-open>closed")
	if v := m.request("a2", chA); v.Kind != Pass {
		t.Fatalf("closed after the probe, yet %+v", v)
	}
}

func TestProbeRefusedForItsOwnSakeFreesTheSlot(t *testing.T) {
	m := newSim(t, nil)
	openA(m)
	m.advance(DefaultCooldownMs)
	m.step(Wake{})
	m.step(ProbeResult{Channel: chA, Failure: Failure{Code: "ABORTED"}})
	expect(t, m.step(Wake{}), Pass, "probe:p/a")
}

func TestProbesOffMeansNoWakes(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Probes = false })
	m.request("a1", chA)
	for _, fx := range m.fail("a1", BeforeHost, "QUOTA", "", nil).Effects {
		if _, ok := fx.(ScheduleWake); ok {
			t.Fatal("a wake was scheduled with probes off")
		}
	}
}
