package policy

// What the health file keeps (docs/state.md): the module's breakers, less
// the closed records past the prune horizon, which say nothing about now.
// The same horizon is the shared store's expiry (shared.go) and what a
// restore takes (the codec drops a forgotten record before the merge), so a
// record is forgotten alike on disk, in Redis, and on the way in; and a
// host's own stale record gives way to any record merged (takesOver).

const (
	// DefaultHealthPruneMs: a closed record a day old says nothing about now.
	DefaultHealthPruneMs = 24 * 3600 * 1000
	// MinHealthPruneMs and MaxHealthPruneMs bound healthPruneMs: a minute,
	// so a recovery outlives its own probe, and a year.
	MinHealthPruneMs = 60_000
	MaxHealthPruneMs = 365 * 24 * 3600 * 1000
)

// Stale is whether h is past the prune horizon at now, on this host's
// clock: closed, and both its last change and its last counted failure
// older than HealthPruneMs. An open or half-open record is never stale,
// however old: its trip is still news. A stale record this host holds gives
// way to any record merged (takesOver).
func (s *State) Stale(now int64, h ChannelHealth) bool {
	return h.State == Closed && max(h.ChangedAtMs, h.LastFailureMs) < now-s.cfg.HealthPruneMs
}

// Forgotten is whether h is stale by more than the hosts' clocks may
// disagree (MaxClockSkewMs): then every host holding it finds it stale too,
// and gives way. The file, a restore and the shared store drop only these:
// dropped at the horizon, a record another host, its clock a little behind,
// still held as fresh was gone from the file; a host restarted since
// numbered the channel afresh, and its trip, at a lower version, lost to it.
func (s *State) Forgotten(now int64, h ChannelHealth) bool {
	return s.Stale(now-s.cfg.MaxClockSkewMs, h)
}

// Persisted is the health the file keeps at now: Health less its forgotten records.
func (s *State) Persisted(now int64) []ChannelHealth {
	all := s.Health()
	out := all[:0]
	for _, h := range all {
		if !s.Forgotten(now, h) {
			out = append(out, h)
		}
	}
	return out
}

// takesOver reports whether the state takes h over local, its own record of
// h's channel, at now: as the merge order says (merge.go, takes), or when
// local is stale and h is not. A stale record is soon in no file, so a host
// started since numbers the channel's transitions afresh: its trip, at a
// version below the one this host still holds, must not lose to a record
// that says nothing about now. (The clock worlds found it with a one-hour
// horizon: a long-running host never saw a restarted host's trip.) A stale
// h is no news: taken, copies of old records passing between processes
// would be adopted back and forth, each adoption a save, until forgotten.
func (s *State) takesOver(h, local ChannelHealth, now int64) bool {
	return takes(h, local, now, s.cfg.MaxClockSkewMs) || s.Stale(now, local) && !s.Stale(now, h)
}
