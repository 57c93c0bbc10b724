package policy

import "testing"

// A live merge (MergeLive: a refresh of the shared file, a record published
// through Redis) times a transition it has not seen from its receipt; a
// restore at start (Merge) reads records as their writers dated them.

// shareLive merges from's health into to as news, at to's now.
func shareLive(to, from *sim) int {
	n, skipped := to.s.MergeLive(to.now, from.s.Health())
	if skipped != nil {
		to.t.Fatalf("skipped %v", skipped)
	}
	return n
}

func TestLiveMergeTimesANewOpenFromReceipt(t *testing.T) {
	const cooldown = 30_000
	for _, tc := range []struct {
		name    string
		off     int64 // B's clock from A's
		delayMs int64 // from B's trip to A's receipt
		boot    int64 // how long A avoids the channel when it restores B's record at start instead
	}{
		{"B 10 min behind", -10 * minute, 0, 0}, // the record arrives due: the bug
		{"B 2 min behind, within the skew", -2 * minute, 0, 0},
		{"in step", 0, 0, cooldown},
		{"in step, a refresh later", 0, 5_000, cooldown - 5_000},
		{"B 2 min ahead, within the skew", 2 * minute, 0, 2*minute + cooldown},
		{"B 10 min ahead: clamped either way", 10 * minute, 0, cooldown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := twoHosts(t, tc.off)
			openA(b)
			advanceBoth(a, b, tc.delayMs)
			boot, _ := twoHosts(t, 0)
			boot.now = a.now
			share(boot, b)
			if got := max(0, boot.s.circuits[chA].openUntilMs-boot.now); got != tc.boot {
				t.Errorf("restore at start: held %d ms, want %d (its semantics must not change)", got, tc.boot)
			}
			if n := shareLive(a, b); n == 0 {
				t.Fatal("B's trip was not adopted")
			}
			c := a.s.circuits[chA]
			if c.state != Open || c.openUntilMs != a.now+cooldown {
				t.Fatalf("live: %s until +%d ms, want open for B's open time (%d ms) from receipt", c.state, c.openUntilMs-a.now, cooldown)
			}
			if c.changedAtMs != a.now {
				t.Errorf("live: change time %d ms from receipt, want the receipt", c.changedAtMs-a.now)
			}
			if c.opens != 1 || c.version != b.s.circuits[chA].version {
				t.Errorf("live: opens %d version %d: the record's counts did not come along", c.opens, c.version)
			}
		})
	}
}

func TestLiveMergeNeverStretchesAnOpenTwice(t *testing.T) {
	for _, off := range []int64{-10 * minute, 0, 10 * minute} {
		a, b := twoHosts(t, off)
		openA(b)
		advanceBoth(a, b, 1_000)
		shareLive(a, b)
		until := a.s.circuits[chA].openUntilMs
		// Refreshes of the same record, and the hosts sending their records
		// back and forth (Redis takes the later end of one version), every
		// second: the open ends where its first receipt put it.
		for range 20 {
			advanceBoth(a, b, 1_000)
			shareLive(a, b)
			shareLive(b, a)
			share(a, b) // and as a restore reads it
			if got := a.s.circuits[chA].openUntilMs; got != until {
				t.Fatalf("offset %d: A's open moved by %d ms on a re-read", off, got-until)
			}
		}
		if a.state(chA) != Open {
			t.Fatalf("offset %d: A's open ended early: %s", off, a.state(chA))
		}
		if held := b.s.circuits[chA].openUntilMs - b.now; held > 30_000 {
			t.Fatalf("offset %d: B's own open was stretched to %d ms ahead by A's copy", off, held)
		}
	}
}

func TestLiveMergeTakesAConcurrentOpenOverOwnCloseAsNews(t *testing.T) {
	// A's primary is healthy, B's dead, B 10 min behind: A closes the breaker
	// with a success at the very version at which B trips it again.
	a, b := twoHosts(t, -10*minute)
	openA(b)
	shareLive(a, b)
	advanceBoth(a, b, 30_000)
	a.request("a1", chA)
	a.step(Settled{Agent: "a1"})
	b.request("b1", chA)
	b.fail("b1", BeforeHost, "SERVER", "", nil)
	ca, cb := a.s.circuits[chA], b.s.circuits[chA]
	if ca.state != Closed || cb.state != Open || ca.version != cb.version {
		t.Fatalf("setup: A %s v%d, B %s v%d", ca.state, ca.version, cb.state, cb.version)
	}
	shareLive(a, b)
	if ca.state != Open || ca.openUntilMs-a.now != cb.openUntilMs-b.now {
		t.Fatalf("A holds B's re-trip %s for %d ms, want B's open time %d ms", ca.state, ca.openUntilMs-a.now, cb.openUntilMs-b.now)
	}
}

func TestLiveMergeMakesRequestsSentBeforeReceiptStale(t *testing.T) {
	a, b := twoHosts(t, -10*minute)
	a.request("a1", chA) // in flight on A's healthy primary when B's trip arrives
	a.advance(500)
	b.advance(500)
	openA(b)
	shareLive(a, b)
	a.advance(500)
	a.step(Settled{Agent: "a1"})
	if a.state(chA) != Open {
		t.Fatalf("a success sent before A knew of the open closed it: %s", a.state(chA))
	}
}

func TestLiveMergeTimesAProviderRecordFromReceipt(t *testing.T) {
	a, _ := twoHosts(t, 0)
	writer := a.now - 10*minute // a writer 10 min behind, its provider open for a minute
	rec := ChannelHealth{Channel: Channel{"p", providerModel}, State: Open, Opens: 1, OpenUntilMs: writer + minute,
		ChangedAtMs: writer, Version: 1, LastCode: "QUOTA", MarkedAtMs: writer - 1_000}
	if n, _ := a.s.MergeLive(a.now, []ChannelHealth{rec}); n != 1 {
		t.Fatal("not adopted")
	}
	p := a.s.providers["p"].breaker
	if p.state != Open || p.openUntilMs != a.now+minute || p.changedAtMs != a.now || p.markedAtMs != a.now-1_000 {
		t.Fatalf("provider %s until %+d changed %+d marked %+d: want its writer's times from receipt",
			p.state, p.openUntilMs-a.now, p.changedAtMs-a.now, p.markedAtMs-a.now)
	}
	a.advance(1_000) // the same record again: not news
	a.s.MergeLive(a.now, []ChannelHealth{rec})
	if p := a.s.providers["p"].breaker; p.openUntilMs != a.now-1_000+minute {
		t.Fatalf("a re-read moved the provider's open end by %d ms", p.openUntilMs-(a.now-1_000+minute))
	}
}

// A record passed on by a host that read it at a restore says the open time
// its writer observed: a writer ahead within the skew has its open taken as
// written, and a third host that learns of it live from the second holds it
// for the writer's open time from receipt, not for that plus the writer's
// lead (simulator seed 46's clock world: 472 s held, against a 240 s longest
// open plus 180 s skew, after a few such hand-ons).
func TestPassedOnRecordKeepsItsWritersOpenTime(t *testing.T) {
	const cooldown = 30_000
	for _, lead := range []int64{0, 1_000, 2 * minute, 10 * minute} {
		a, b := twoHosts(t, lead) // B, the writer, ahead of A by lead
		c := newSim(t, func(c *Config) { c.CooldownMs = cooldown })
		openA(b)
		share(a, b) // A restarts and reads the store
		if a.state(chA) != Open {
			t.Fatalf("lead %d: A did not take B's open", lead)
		}
		h := a.s.circuits[chA].record(Open)
		if got := h.OpenUntilMs - h.ChangedAtMs; got != cooldown {
			t.Fatalf("lead %d: A passes the open on as %d ms, its writer observed %d", lead, got, cooldown)
		}
		shareLive(c, a) // C learns of it from A
		if held := c.s.circuits[chA].openUntilMs - c.now; held > cooldown {
			t.Fatalf("lead %d: C holds the open %d ms from receipt, its writer observed %d", lead, held, cooldown)
		}
		// A's own hold is still the writer's end when within the skew.
		if lead <= a.s.cfg.MaxClockSkewMs && a.s.circuits[chA].openUntilMs != b.s.circuits[chA].openUntilMs {
			t.Fatalf("lead %d: A's open does not end when its writer's does", lead)
		}
	}
}
