package policy

// Cold pass: what the next host process may do with a session's first
// request before its module is up.
//
// Bringing an instance up (compiling the guest, the Go runtime's start,
// configure, restore) costs a host's main thread about 30 ms, and doing it
// before the first request delays that request by as much. When this
// module would pass a new session's first request whatever channel it
// proposed, the next process need not wait for it: the request goes as
// proposed, and the module is told of it once it is up. ColdPass says
// whether that holds for a process started from this state's snapshot
// (its health) under the same config.
//
// What the next module knows at its first request is its config, the health
// file, the backup and the sessions' saved settings: model info is asked
// only once the host has booted, slowness is local and re-learned, agents
// start afresh. The shell leaves out sessions with saved settings (a home,
// a pick: the module would be told them first). So it holds when the config
// routes no new session by rule (no pools, no quota rules, no balance
// readings: a pool or a low reading can move a new session) and every health
// record is closed and unmarked: every channel is routable, so the first
// preference, the proposed channel, is taken.
//
// A cold pass the module would not have made costs one request sent as the
// host alone would send it; its failure is decided as any other once the
// module is up, and the shell audits the miss.
func (s *State) ColdPass() bool {
	if len(s.cfg.Pools) > 0 || s.cfg.Quota.Active || len(s.cfg.Quota.Balances) > 0 {
		return false
	}
	for _, c := range s.circuits {
		if c.recordedState() != Closed {
			return false
		}
	}
	for _, p := range s.providers {
		if b := &p.breaker; b.state != Closed || b.markedAtMs != 0 {
			return false
		}
	}
	return true
}
