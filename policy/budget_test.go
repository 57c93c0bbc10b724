package policy

import "testing"

func TestRetryBudgetStopsAStormAcrossAgents(t *testing.T) {
	m := newSim(t, func(c *Config) {
		c.Chain = []Channel{chA, chC}
		c.RetryBudgetFloor, c.RetryBudgetPercent, c.FailureThreshold = 3, 0, 100
	})
	var sameChannel int
	for i := 0; i < 10 && m.state(chA) == Closed; i++ {
		agent := string(rune('a' + i))
		m.request(agent, chA)
		if out := m.fail(agent, AfterHost, "STREAM_CLOSED", "", llmRetry); out.Verdict.Kind == Wait {
			sameChannel++
		} else {
			expect(t, out, Retry, "circuit:closed>open", "failover:q/c")
		}
	}
	if sameChannel != 3 || m.state(chA) != Open {
		t.Fatalf("%d same-channel retries before the channel opened (state %s), want the floor of 3", sameChannel, m.state(chA))
	}
}

func TestRetryBudgetScalesWithTraffic(t *testing.T) {
	b := &budget{}
	cfg := DefaultConfig()
	cfg.RetryBudgetFloor, cfg.RetryBudgetPercent = 0, 10
	now := int64(1_000_000)
	for i := 0; i < 100; i++ {
		b.request(now)
	}
	spent := 0
	for b.spend(now, &cfg) {
		spent++
	}
	if spent != 10 {
		t.Fatalf("spent %d retries on 100 requests at 10%%", spent)
	}
	if b.spend(now+budgetWindowMs+budgetSlotMs, &cfg) {
		t.Fatal("a window later with no requests, the budget should be empty again (floor 0)")
	}
}
