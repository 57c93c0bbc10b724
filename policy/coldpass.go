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
	if !s.cfg.passesNewSessions() {
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

// passesNewSessions: the config routes no new session by rule. A pool or a
// low balance reading can move one; the quota rules act on marks.
func (c *Config) passesNewSessions() bool {
	return len(c.Pools) == 0 && !c.Quota.Active && len(c.Quota.Balances) == 0
}

// RuleKeys are the row keys that route new sessions by rule: a row with any
// of them present (not null) has pools or the quota rules on, balances
// included (the codec's resolve turns the rules on by this list).
//
// They carry the module's word where no snapshot can: a home with no
// health records yet, a first run's. From no records, ColdPass is the
// config's part alone, so a row without these keys passes any new
// session's first request as proposed, and the shim sends it before the
// module is up (host-shim/cold-start.js, from the list generated into
// policy-defaults.js). The list need only be sound: a row with
// `quota: {active: false}` would pass, and waits.
var RuleKeys = []string{"pools", "quota"}
