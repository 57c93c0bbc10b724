package codec

// The `persist` export: what the health file keeps at a time
// (policy/persist.go), and the cold-pass word the shim writes beside it.
// The shim only writes the answer.

func init() { register("persist", (*Module).Persist) }

// Persist answers the health file's content at nowMs.
func (m *Module) Persist(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "persist")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "nowMs")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	if d.err != nil {
		return nil, d.err
	}
	var w writer
	w.beginObject("")
	w.beginObject("health")
	w.beginArray("channels")
	for _, h := range m.state.Persisted(int64(now)) {
		writeHealth(&w, "", h)
	}
	w.endArray()
	w.endObject()
	w.boolean("coldPass", m.state.ColdPass())
	w.endObject()
	return w.b, nil
}
