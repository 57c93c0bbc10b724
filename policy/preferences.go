package policy

// Preferences are what the user told the module to prefer, module-wide:
// the backup (`/resilience backup`, the chip, the card). The module is
// their one holder while the process lives: the command's table, the chip
// and the card ask it rather than keep a copy, so none can show a choice
// the module does not route by.
type Preferences struct {
	Backup Channel // zero: none
}

// Preferences answers them; it changes nothing.
func (s *State) Preferences() Preferences { return Preferences{Backup: s.backup} }
