package policy

import (
	"reflect"
	"testing"
)

// The give-up horizon and held turns (issue #17): the chain [flash,
// secondary] with a 10 s cooldown; flash is rate limited (three 429s open
// it), secondary's allowance is spent with a reset an hour away.
var (
	flash     = Channel{"deepseek", "flash"}
	secondary = Channel{"tokenplan", "secondary"}
)

const hourMs = 3_600_000

func horizonSim(t *testing.T, mutate func(*Config)) *sim {
	return newSim(t, func(c *Config) {
		c.Chain = []Channel{flash, secondary}
		c.CooldownMs = 10_000
		c.ProviderThreshold = 0
		c.SpillAfter = 0 // three 429s on flash, as in the report
		if mutate != nil {
			mutate(c)
		}
	})
}

// openFlashThenSpendSecondary plays flash's three 429s (the third opens it
// and fails the agent over) and secondary's spent cap; it returns the
// verdict on secondary's failure.
func openFlashThenSpendSecondary(t *testing.T, m *sim) Output {
	t.Helper()
	m.request("a1", flash)
	for i := 0; i < 2; i++ {
		expect(t, m.step(RequestError{Agent: "a1", Provider: flash.Provider, Failure: Failure{Code: "RATE_LIMIT", Status: 429}, Phase: BeforeHost, HostRetry: stock}), Defer)
		m.advance(500)
		m.request("a1", flash)
	}
	expect(t, m.step(RequestError{Agent: "a1", Provider: flash.Provider, Failure: Failure{Code: "RATE_LIMIT", Status: 429}, Phase: BeforeHost, HostRetry: stock}),
		Retry, "circuit:closed>open", "failover:tokenplan/secondary")
	if v := m.request("a1", flash); v.Channel != secondary {
		t.Fatalf("routed to %+v, want secondary", v)
	}
	m.advance(400)
	return m.step(RequestError{Agent: "a1", Provider: secondary.Provider, Phase: BeforeHost, HostRetry: stock,
		Failure: Failure{Code: "RATE_LIMIT", Status: 429, Message: "Token Plan usage limit reached", RetryAfterMs: hourMs}})
}

func TestTheWaitIsForTheSoonestChannel(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		verdict VerdictKind
		effects []string
		delayMs int64 // with a wait
		gaveUp  *GaveUp
	}{
		{"engine rules: wait for flash's 10 s, not secondary's hour", nil,
			Wait, []string{"circuit:closed>open", "retry"}, 10_000 - 400, nil},
		{"quota rules: secondary is marked and the turn held, cut when flash is back", func(c *Config) { c.Quota.Active = true },
			Wait, []string{"circuit:closed>open", "retry"}, DefaultLongTermDelayMs, nil},
		{"a horizon shorter than flash's open time: give up, naming secondary's failure and what was tried",
			func(c *Config) { c.GiveUpAfterMs = 5_000 }, Delegate, []string{"circuit:closed>open", "give-up:recovery-timeout"}, 0,
			&GaveUp{Agent: "a1", Channel: secondary, Reason: RecoveryTimeout, Code: "RATE_LIMIT",
				Tried: []Tried{{flash, "RATE_LIMIT"}, {secondary, "RATE_LIMIT"}}, Failovers: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := horizonSim(t, tt.mutate)
			out := openFlashThenSpendSecondary(t, m)
			expect(t, out, tt.verdict, tt.effects...)
			if tt.verdict == Wait && out.Verdict.DelayMs != tt.delayMs {
				t.Fatalf("waits %d ms, want %d", out.Verdict.DelayMs, tt.delayMs)
			}
			if tt.gaveUp != nil {
				if got := out.Effects[len(out.Effects)-1]; !reflect.DeepEqual(got, *tt.gaveUp) {
					t.Fatalf("give-up %+v, want %+v", got, *tt.gaveUp)
				}
			}
		})
	}
}

// After the wait, flash answers: no give-up anywhere in the turn.
func TestFlashAnswersAfterItsCooldown(t *testing.T) {
	m := horizonSim(t, func(c *Config) { c.Probes = false })
	out := openFlashThenSpendSecondary(t, m)
	m.advance(out.Verdict.DelayMs)
	if v := m.request("a1", flash); v.Kind != Pass {
		t.Fatalf("after the wait: %+v, want flash (pass)", v)
	}
	m.step(Settled{Agent: "a1"})
	if m.state(flash) != Closed {
		t.Fatalf("flash is %s after its answer", m.state(flash))
	}
}

// A held turn ends as soon as a channel the agent may use is back: the
// module cuts the wait in the step that closes it, with or without the
// quota rules, and names the channel.
func TestAHeldTurnIsCutWhenAChannelComesBack(t *testing.T) {
	for _, quota := range []bool{false, true} {
		t.Run(map[bool]string{false: "engine wait", true: "long-term quota wait"}[quota], func(t *testing.T) {
			m := horizonSim(t, func(c *Config) { c.Quota.Active = quota; c.CooldownMs = 60_000 })
			out := openFlashThenSpendSecondary(t, m)
			if out.Verdict.Kind != Wait {
				t.Fatalf("verdict %+v, want a wait", out.Verdict)
			}
			m.advance(60_000 - 400) // flash's open time ends: the wake probes it
			expect(t, m.step(Wake{}), Pass, "circuit:open>half-open", "probe:deepseek/flash")
			m.advance(300)
			expect(t, m.step(ProbeResult{Channel: flash, OK: true}), Pass, "circuit:half-open>closed", "wait-cut:deepseek/flash")
			if v := m.request("a1", flash); v.Kind != Pass {
				t.Fatalf("the cut wait's retry: %+v, want flash", v)
			}
			if a := m.s.agents.lookup("a1"); a.heldAt != 0 || len(m.s.held) != 0 {
				t.Fatal("still held after its retry")
			}
		})
	}
}

// A failed probe, or a backup the agent cannot route to yet, cuts nothing;
// a backup it can use does.
func TestOnlyAUsableChannelCutsAWait(t *testing.T) {
	m := horizonSim(t, func(c *Config) { c.CooldownMs = 60_000 })
	openFlashThenSpendSecondary(t, m)
	m.advance(60_000 - 400)
	m.step(Wake{})
	m.advance(300)
	expect(t, m.step(ProbeResult{Channel: flash, OK: false, Failure: Failure{Code: "SERVER"}}), Pass, "circuit:half-open>open")
	spare := Channel{"spare", "m"}
	expect(t, m.step(SetBackup{Channel: spare}), Pass, "wait-cut:spare/m")
	if v := m.request("a1", flash); v.Channel != spare {
		t.Fatalf("routed to %+v, want the backup", v)
	}
}

// A same-channel wait whose stated reset is beyond the horizon no longer
// gives up while a fallback is routable: the channel opens for its stated
// time and the agent fails over.
func TestAStatedWaitPastTheHorizonFailsOver(t *testing.T) {
	m := newSim(t, func(c *Config) { c.ProviderThreshold = 0; c.GiveUpAfterMs = 45_000; c.SpillAfter = 0 })
	m.request("a1", chA)
	out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "RATE_LIMIT", RetryAfterMs: 10 * 60_000}, Phase: AfterHost, HostRetry: stock})
	expect(t, out, Retry, "circuit:closed>open", "failover:p/b")
	if cc := out.Effects[0].(CircuitChanged); cc.OpenUntilMs != m.now+10*60_000 {
		t.Fatalf("open until %d, want the stated reset %d", cc.OpenUntilMs, m.now+10*60_000)
	}
}

// A breaker closed by another host comes in merged, not as a transition: the
// wake the shim sends after a merge cuts the held turn.
func TestAMergedCloseCutsAHeldTurnAtTheNextWake(t *testing.T) {
	m := horizonSim(t, func(c *Config) { c.CooldownMs = 60_000; c.Probes = false })
	openFlashThenSpendSecondary(t, m)
	m.advance(5_000)
	m.s.Merge(m.now, []ChannelHealth{{Channel: flash, State: Closed, ChangedAtMs: m.now}})
	expect(t, m.step(Wake{}), Pass, "wait-cut:deepseek/flash")
}
