package codec

func init() { register("preferences", (*Module).Preferences) }

// Preferences answers the user's module-wide choices (policy/preferences.go):
// the backup. Changes nothing; the input is ignored.
func (m *Module) Preferences([]byte) ([]byte, error) {
	if m.state == nil {
		return nil, ErrNotConfigured
	}
	p := m.state.Preferences()
	var w writer
	w.beginObject("")
	optChannel(&w, "backup", p.Backup)
	w.endObject()
	return w.b, nil
}
