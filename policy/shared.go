package policy

import "slices"

// What a shared store (Redis across machines, docs/state.md) is known to
// hold, per channel, so the module decides which of its records the store
// still needs and the shim only writes them. The store merges each write
// itself in the same order (remoteWins, merge.go), so a record is due when it
// wins over what the store is known to hold: one the store holds, or holds a
// winner over, is never sent again, and one it lacks is sent once more only
// after the store may have lost it (an outage: SharedDue's forget).
//
// Known from three sources: records read from the store (it holds exactly
// these), records published through it and writes the shim reports done (it
// holds these or a winner). The knowledge is the instance's, not the
// policy's: the snapshot carries it (health.shared) so a rebuilt or
// reconfigured instance takes it back, and the health file never does (it is
// one process's view of the store).

// SharedWrite is a record due in the shared store and when the store may
// forget it: when the newest time in it (its open end, change or last
// failure) is older than the prune age plus the clock skew, as a closed
// record on file is (persist.go, Forgotten).
type SharedWrite struct {
	Record     ChannelHealth
	ExpireAtMs int64
}

// NoteShared notes records the shared store holds. read: read from the store
// now, so it holds exactly these; otherwise (published through it, written,
// or a snapshot's list passed back) it holds each or one that wins over it.
// Records are expected valid (ValidHealth); an invalid one is not noted.
func (s *State) NoteShared(hs []ChannelHealth, read bool) {
	for i, h := range hs {
		if ValidHealth(i, h) != nil {
			continue
		}
		if held, ok := s.shared[h.Channel]; ok && !read && !remoteWins(h, held) {
			continue
		}
		if s.shared == nil {
			s.shared = map[Channel]ChannelHealth{}
		}
		s.shared[s.intern(h.Channel)] = h
	}
}

// SharedHeld lists what the shared store is known to hold, sorted by channel.
func (s *State) SharedHeld() []ChannelHealth {
	out := make([]ChannelHealth, 0, len(s.shared))
	for _, h := range s.shared {
		out = append(out, h)
	}
	slices.SortFunc(out, func(a, b ChannelHealth) int { return a.Channel.compare(b.Channel) })
	return out
}

// SharedDue lists the records of Health the shared store needs: each that
// wins over what it is known to hold for its channel (an equal record
// replaces nothing). forget: the store may have lost everything (it was
// away), so what it was known to hold is forgotten first and every record is
// due; the reads that follow note again what it still holds.
func (s *State) SharedDue(forget bool) []SharedWrite {
	if forget {
		clear(s.shared)
	}
	var out []SharedWrite
	for _, h := range s.Health() {
		if held, ok := s.shared[h.Channel]; ok && !remoteWins(h, held) {
			continue
		}
		out = append(out, SharedWrite{Record: h, ExpireAtMs: max(h.OpenUntilMs, h.ChangedAtMs, h.LastFailureMs) + s.cfg.HealthPruneMs + s.cfg.MaxClockSkewMs})
	}
	return out
}
