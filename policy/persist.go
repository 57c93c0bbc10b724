package policy

// What the health file keeps (docs/state.md): the module's breakers, less
// the closed records past the prune horizon, which say nothing about now.
// The same horizon is the shared store's expiry (shared.go) and what a
// restore takes (the codec drops a stale record before the merge), so a
// record is forgotten alike on disk, in Redis, and on the way in.

const (
	// DefaultHealthPruneMs: a closed record a day old says nothing about now.
	DefaultHealthPruneMs = 24 * 3600 * 1000
	// MinHealthPruneMs and MaxHealthPruneMs bound healthPruneMs: a minute,
	// so a recovery outlives its own probe, and a year.
	MinHealthPruneMs = 60_000
	MaxHealthPruneMs = 365 * 24 * 3600 * 1000
)

// Stale is whether h is past the prune horizon at now: closed, and both its
// last change and its last counted failure older than HealthPruneMs. An open
// or half-open record is never stale, however old: its trip is still news.
func (s *State) Stale(now int64, h ChannelHealth) bool {
	return h.State == Closed && max(h.ChangedAtMs, h.LastFailureMs) < now-s.cfg.HealthPruneMs
}

// Persisted is the health the file keeps at now: Health less its stale records.
func (s *State) Persisted(now int64) []ChannelHealth {
	all := s.Health()
	out := all[:0]
	for _, h := range all {
		if !s.Stale(now, h) {
			out = append(out, h)
		}
	}
	return out
}
