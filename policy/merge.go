package policy

// How hosts sharing health (one health file, or Redis across machines) agree
// on a breaker without trusting each other's wall clocks.
//
// Order: the higher Version wins. Every transition makes a breaker's version
// one more than the highest it has seen (its own, or one it adopted), so a
// record that another host wrote before it learned of ours loses to ours,
// whatever its clock said: a host's own fresh trip is never overruled by a
// record that causally precedes it. Equal versions are concurrent
// transitions; the tie goes, the same way on every host, to the more
// cautious record: open over closed, then more opens, then more failures,
// then the later open end, and a full tie keeps what the state holds.
//
// Time: a record's open time is read as its writer observed it, an interval
// (OpenUntilMs - ChangedAtMs, both on the writer's clock). Hosts' clocks are
// assumed to agree within MaxClockSkewMs. A record whose change time is no
// further ahead of this host's clock than that is taken as it is: in step,
// its open ends exactly when the writer's does, and taking it again (a
// rebuild, a restart, a refresh) never stretches it. One written further
// ahead comes from a clock that cannot be trusted: it is clamped to start
// now, so it holds the channel no longer than its writer observed. Either
// way no open lasts beyond its writer's own open time plus the allowed skew.
// That is how a restore at start reads a file: records dated at hand-over.
//
// A live merge (State.MergeLive: news from a process running now) times a
// transition it has not seen before (a version above its own) from its
// receipt instead: an open holds this host for the open time its writer
// chose, starting when this host learns of it, and its change time is the
// receipt. Read by the writer's clock, a writer behind ends its opens early
// here by its lag, and past the open time they arrive due: a host whose
// primary is healthy used it at once and closed the shared breaker, and the
// writer, its primary dead, tripped again on every close rather than once
// per open time (27 requests to a dead primary in 20 s against 3, measured).
// A receipt is at most one refresh or one publish after the write, so this
// stretches an open by that delay; once per version, so re-reading the same
// record, or sending it back, never stretches it again (RATIONALE.md,
// "Clocks").

// remoteWins reports whether the record h should replace local, the state's
// own breaker as a record.
func remoteWins(h, local ChannelHealth) bool {
	if h.Version != local.Version {
		return h.Version > local.Version
	}
	if r, l := stateRank(h.State), stateRank(local.State); r != l {
		return r > l
	}
	if h.Opens != local.Opens {
		return h.Opens > local.Opens
	}
	if h.Failures != local.Failures {
		return h.Failures > local.Failures
	}
	// Hosts tripping a dead channel at about the same time: the open that
	// ends last, so the batch keeps the longest hold any of them chose (a
	// writer's clock far ahead is clamped when adopted, merge.go above).
	return h.State != Closed && h.OpenUntilMs > local.OpenUntilMs
}

// takes reports whether this host takes h over local, its own breaker as a
// record, at now: h wins the merge order (remoteWins), except that two opens
// at one version differing only in their ends (concurrent trips) go to the
// later end only when h's is read as written (localOpenUntil): a record from
// a clock beyond the skew is clamped to start now, so its end would win every
// re-read and move this host's open forward by each refresh (measured: a
// writer 10 min ahead, re-read every second, stretched it a second a time).
// Stores order records by remoteWins alone: this is the module's reading.
func takes(h, local ChannelHealth, now, maxSkewMs int64) bool {
	if !remoteWins(h, local) {
		return false
	}
	if h.Version == local.Version && h.State != Closed && local.State != Closed && h.Opens == local.Opens && h.Failures == local.Failures {
		return h.ChangedAtMs-now <= maxSkewMs
	}
	return true
}

// news reports whether h, a record that wins over local, is a transition
// the state has not seen: one made after all it knows (a higher version), or
// a concurrent open that wins over its own close at the same version (a host
// whose healthy primary just closed the breaker while another's, dead,
// tripped it again). An equal version held open on both sides is a
// concurrent trip this state made too: its times are read as written.
func news(h, local ChannelHealth) bool {
	return h.Version > local.Version || stateRank(h.State) > stateRank(local.State)
}

func stateRank(s CircuitState) int {
	if s == Closed {
		return 0
	}
	return 1
}

// record is the breaker as a health record, its state given as recorded.
func (c *circuit) record(st CircuitState) ChannelHealth {
	return ChannelHealth{Channel: c.channel, State: st, Failures: c.failures, Opens: c.opens,
		OpenUntilMs: c.openUntilMs, LastCode: c.lastCode, ChangedAtMs: c.recordedAtMs, Version: c.version,
		MarkedAtMs: c.markedAtMs, LastFailureMs: c.lastFailureMs}
}

// recordedState is the state a channel breaker is recorded in: half-open as
// open and due, so a restarted host probes it again rather than trusting a
// probe it lost.
func (c *circuit) recordedState() CircuitState {
	if c.state == HalfOpen {
		return Open
	}
	return c.state
}

// localOpenUntil is when a record's open time ends on this host's clock.
func localOpenUntil(h ChannelHealth, now, maxSkewMs int64) int64 {
	if h.ChangedAtMs-now <= maxSkewMs {
		return h.OpenUntilMs
	}
	return now + max(0, h.OpenUntilMs-h.ChangedAtMs) // clamped to what the writer observed
}

// adopt takes a record as the breaker's state at local time now. A channel's
// half-open record becomes open and due: its probe belonged to another
// process. A provider's stays half-open: a provider breaker holds no probe,
// and its half-open says only that its open time has ended (made open again
// it would be due at once and its wake would report a second, false end).
// Its change time is the writer's, but never later than now: settle
// (settle.go) compares it with local send times, and a writer's clock ahead
// must not make every local request look older than the change (a healthy
// primary held open ~11 min, measured, when it did).
//
// fresh: a live merge's first sight of this transition (merge.go, "Time"):
// an open is timed from now, its receipt, so its change time is now (a
// request sent before this host knew of the open is stale evidence to
// settle) and its other times keep their distance before the change.
func (c *circuit) adopt(h ChannelHealth, now, maxSkewMs int64, fresh bool) {
	c.state = h.State
	if c.state == HalfOpen && c.channel.Model != providerModel {
		c.state = Open
	}
	at := func(t int64) int64 { return min(t, now) } // the writer's time, never later than now
	c.openUntilMs = 0
	if h.State != Closed {
		c.openUntilMs = localOpenUntil(h, now, maxSkewMs)
		if fresh {
			at = func(t int64) int64 { return now - max(0, h.ChangedAtMs-t) }
			c.openUntilMs = now + max(0, h.OpenUntilMs-h.ChangedAtMs)
		}
	}
	c.failures, c.opens, c.lastCode, c.version = h.Failures, h.Opens, h.LastCode, h.Version
	c.changedAtMs = at(h.ChangedAtMs)
	// The record passed on keeps the open time its writer observed
	// (OpenUntilMs - ChangedAtMs). An open taken as written from a writer
	// ahead keeps the writer's change time in its record: with the change
	// clamped to now and the end as written, the record would say a longer
	// open than the writer's, and each host that took it fresh after (timed
	// from receipt) would hold it longer again (measured in the clock world:
	// 472 s held against a 240 s longest open plus 180 s skew).
	c.recordedAtMs = c.changedAtMs
	if c.state != Closed && !fresh && c.openUntilMs == h.OpenUntilMs {
		c.recordedAtMs = h.ChangedAtMs
	}
	// The burst goes on from the writer's last failure (never later than now:
	// a writer's clock ahead must not stretch the burst window); a record
	// without one dates its burst from its change.
	c.lastFailureMs = c.changedAtMs
	if h.LastFailureMs > 0 {
		c.lastFailureMs = at(h.LastFailureMs)
	}
	c.probeAgent, c.probeSinceMs = "", 0
	c.markedAtMs = 0
	// A provider's exhaustion mark comes with its record, while the open time
	// it set is still running here: a lapsed one says nothing about now (and
	// would list the provider in the quota report for ever). Read on the
	// writer's clock, so never later than now, like the change time.
	if c.channel.Model == providerModel && h.MarkedAtMs > 0 && c.state != Closed && c.openUntilMs > now {
		c.markedAtMs = at(h.MarkedAtMs)
	}
	c.changed()
}
