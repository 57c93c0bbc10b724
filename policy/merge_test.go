package policy

import (
	"fmt"
	"testing"
)

// The measured clock cases of shared health (RATIONALE.md, "Clocks"), two
// hosts sharing health by merging each other's snapshots. Each host's now is
// its own clock; offsets are how far B's clock is from A's.

const minute = 60_000

// share merges from's health into to, as a refresh of the shared store does.
func share(to, from *sim) int {
	n, skipped := to.s.Merge(to.now, from.s.Health())
	if skipped != nil {
		to.t.Fatalf("skipped %v", skipped)
	}
	return n
}

func twoHosts(t *testing.T, offsetB int64) (a, b *sim) {
	cfg := func(c *Config) { c.CooldownMs = 30_000 }
	a, b = newSim(t, cfg), newSim(t, cfg)
	b.now += offsetB
	return a, b
}

func advanceBoth(a, b *sim, ms int64) { a.advance(ms); b.advance(ms) }

// recoverA trips chA on m and closes it again with a successful probe.
func recoverA(m *sim) {
	openA(m)
	m.advance(m.s.cfg.CooldownMs)
	m.request("probe", chA)
	m.step(Settled{Agent: "probe"})
	if m.state(chA) != Closed {
		m.t.Fatalf("did not recover: %s", m.state(chA))
	}
}

func TestClockAheadNeitherHoldsOpenNorOverrules(t *testing.T) {
	for _, off := range []int64{10 * minute, -10 * minute, 2 * minute, 0} {
		a, b := twoHosts(t, off)
		recoverA(b) // B's closed record, changed "later" by its clock when ahead
		share(a, b)
		openA(a) // A trips for real after learning of B's recovery
		share(a, b)
		if a.state(chA) != Open {
			t.Fatalf("offset %d: B's earlier closed record overruled A's fresh trip", off)
		}
		share(b, a)
		c := b.s.circuits[chA]
		if c.state != Open || c.openUntilMs > b.now+a.s.cfg.CooldownMs+a.s.cfg.MaxClockSkewMs {
			t.Fatalf("offset %d: B holds A's trip %s until +%d ms", off, c.state, c.openUntilMs-b.now)
		}
		// B's view of the open never outlasts what A observed plus the allowed skew.
		if off >= 0 && c.openUntilMs-b.now > a.s.cfg.CooldownMs {
			t.Fatalf("offset %d: open stretched to %d ms", off, c.openUntilMs-b.now)
		}
	}
}

func TestSkewedWriterCannotHoldHealthyPrimaryOpen(t *testing.T) {
	a, b := twoHosts(t, 10*minute) // B ahead
	openA(b)
	share(a, b)
	if a.state(chA) != Open {
		t.Fatal("B's trip did not reach A")
	}
	a.advance(a.s.cfg.CooldownMs)
	if v := a.request("probe", chA); v.Kind != Pass {
		t.Fatalf("A held the primary open past B's own open time: %+v", v)
	}
}

func TestTripOfHostBehindReachesOthers(t *testing.T) {
	for _, tc := range []struct {
		off    int64
		holdMs int64 // how long A avoids the channel
	}{
		{-2 * minute, 0},      // B behind: its 30 s open ended 1.5 min ago here
		{-10 * minute, 0},     // due at once: one probe
		{0, 30_000},           // in step
		{10 * minute, 30_000}, // ahead: clamped to what B observed
	} {
		a, b := twoHosts(t, tc.off)
		recoverA(a) // A's record is at a higher version than B's empty one
		b.now = a.now + tc.off
		share(b, a)
		openA(b)
		if n := share(a, b); n != 1 || a.state(chA) != Open {
			t.Fatalf("offset %d: B's trip was not adopted (n=%d, %s)", tc.off, n, a.state(chA))
		}
		if got := max(0, a.s.circuits[chA].openUntilMs-a.now); got != tc.holdMs {
			t.Fatalf("offset %d: held %d ms, want %d", tc.off, got, tc.holdMs)
		}
		if a.s.circuits[chA].opens != 1 {
			t.Fatal("the open count did not come along: the next open would not double")
		}
	}
}

func TestClockStepBackKeepsOwnTrip(t *testing.T) {
	a, store := twoHosts(t, 0)
	recoverA(a)          // closed at version 3, at T+cooldown
	share(store, a)      // written out
	a.now -= 10 * minute // wall clock stepped back inside A
	openA(a)
	share(a, store) // A's next refresh reads its own older closed record
	if a.state(chA) != Open {
		t.Fatal("a record written before the step overruled the trip after it")
	}
}

func TestEqualVersionsResolveTheSameEverywhere(t *testing.T) {
	a, b := twoHosts(t, 3*minute)
	openA(a)
	share(b, a)
	advanceBoth(a, b, a.s.cfg.CooldownMs)
	a.request("probe", chA) // both probe at once: A's succeeds, B's fails
	a.step(Settled{Agent: "probe"})
	b.request("probe", chA)
	b.fail("probe", BeforeHost, "QUOTA", "", nil)
	share(a, b)
	share(b, a)
	if a.state(chA) != Open || b.state(chA) != Open {
		t.Fatalf("concurrent close and re-open did not settle on the open: %s, %s", a.state(chA), b.state(chA))
	}
}

func TestLocalOpenUntil(t *testing.T) {
	const skew = 3 * minute
	now := int64(100 * minute)
	for _, tc := range []struct {
		name           string
		changed, until int64 // writer's clock
		want           int64
	}{
		{"in step", now - 1000, now + 29_000, now + 29_000},
		{"writer 10 min ahead: clamped", now + 10*minute, now + 10*minute + 30_000, now + 30_000},
		{"writer 2 min ahead: within the skew", now + 2*minute, now + 2*minute + 30_000, now + 2*minute + 30_000},
		{"writer 2 min behind: ends early by its lag", now - 2*minute, now - 2*minute + 30_000, now - 90_000},
		{"old record: over", now - 60*minute, now - 30*minute, now - 30*minute},
		{"old long open: the rest", now - 60*minute, now + 60*minute, now + 60*minute},
	} {
		got := localOpenUntil(ChannelHealth{ChangedAtMs: tc.changed, OpenUntilMs: tc.until}, now, skew)
		if got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got-now, tc.want-now)
		}
		if held := max(0, tc.until-tc.changed); got > now+held+skew {
			t.Errorf("%s: held beyond what the writer observed plus the skew", tc.name)
		}
	}
}

func TestConcurrentTripsKeepTheLongestHold(t *testing.T) {
	a, b := twoHosts(t, 0)
	openA(a)
	b.advance(20_000)
	openA(b) // the same dead channel, tripped later on another host, unaware of A's
	share(a, b)
	share(b, a)
	for _, m := range []*sim{a, b} {
		if c := m.s.circuits[chA]; c.openUntilMs != b.now+30_000 {
			t.Fatalf("the batch kept an earlier end: %d", c.openUntilMs-b.now)
		}
	}
}

// Restored records are judged at the caller's time: long-expired ones do not
// re-open their provider.
func TestMergeJudgesAtNow(t *testing.T) {
	chZ := Channel{"p", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chZ, chC}; c.Probes = false })
	_, err := m.s.Merge(m.now, []ChannelHealth{
		{Channel: chA, State: Open, Opens: 1, OpenUntilMs: 61_000, LastCode: "QUOTA", ChangedAtMs: 1_000},
		{Channel: chB, State: Open, Opens: 1, OpenUntilMs: 61_000, LastCode: "QUOTA", ChangedAtMs: 1_000},
	})
	if err != nil {
		t.Fatal(err)
	}
	m.request("a1", chZ)
	expect(t, m.fail("a1", BeforeHost, "SERVER", "", llmRetry), Defer)
}

// Restoring is linear in the records: 20 000 under one provider once froze a
// host (each record re-derived the provider over every breaker).
func TestMergeManyRecords(t *testing.T) {
	m := newSim(t, nil)
	hs := make([]ChannelHealth, 20_000)
	for i := range hs {
		hs[i] = ChannelHealth{Channel: Channel{"p", fmt.Sprint("m", i)}, State: Open, OpenUntilMs: m.now + 60_000, ChangedAtMs: 1}
	}
	if n, err := m.s.Merge(m.now, hs); err != nil || n != len(hs) {
		t.Fatalf("adopted %d, %v", n, err)
	}
	if p := m.s.providerBreaker("p"); p.state != Open {
		t.Fatalf("provider %s, want open", p.state)
	}
}

func TestMergeAdoptsOnlyNewerRecords(t *testing.T) {
	m := newSim(t, nil)
	openA(m) // a open, changed at now
	local := m.s.Health()[0]
	older := local // concurrent (same version) and closed: the open stays
	older.State, older.ChangedAtMs = Closed, local.ChangedAtMs+1
	if n, skipped := m.s.Merge(m.now, []ChannelHealth{older}); skipped != nil || n != 0 || m.state(chA) != Open {
		t.Fatalf("an older record replaced a newer one: n=%d skipped=%v state=%s", n, skipped, m.state(chA))
	}
	newer := local // a later transition, whatever its clock said
	newer.State, newer.ChangedAtMs, newer.Version = Closed, local.ChangedAtMs-1, local.Version+1
	if n, _ := m.s.Merge(m.now, []ChannelHealth{newer}); n != 1 || m.state(chA) != Closed {
		t.Fatalf("a newer record from another host was not adopted")
	}
	mixed := []ChannelHealth{{Channel: chB, State: Open, OpenUntilMs: m.now + 60_000, ChangedAtMs: m.now + 5}, {Channel: chC, State: "ajar"}}
	if n, skipped := m.s.Merge(m.now, mixed); n != 1 || len(skipped) != 1 || m.state(chB) != Open {
		t.Fatalf("a bad record cost the good one beside it: n=%d skipped=%v state=%s", n, skipped, m.state(chB))
	}
}
