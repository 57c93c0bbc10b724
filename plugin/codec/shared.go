package codec

import (
	"fmt"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
)

func init() {
	register("shared-writes", (*Module).SharedWrites)
	register("shared-written", (*Module).SharedWritten)
}

// SharedWrites answers the records the shared store needs, each with when
// the store may forget it (policy/shared.go): the shim writes them as they
// are and reports each one written (SharedWritten).
func (m *Module) SharedWrites(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "shared-writes")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "forget")
	forget := d.boolean(v.Get("forget"), "forget")
	if d.err != nil {
		return nil, d.err
	}
	var w writer
	w.beginObject("")
	w.beginArray("writes")
	for _, s := range m.state.SharedDue(forget) {
		w.beginObject("")
		writeHealth(&w, "record", s.Record)
		w.int("expireAtMs", min(s.ExpireAtMs, maxMs))
		w.endObject()
	}
	w.endArray()
	w.endObject()
	return w.b, nil
}

// SharedWritten notes records the shim wrote to the shared store, as
// SharedWrites answered them: the store holds each, or one that wins over it.
func (m *Module) SharedWritten(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "shared-written")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "records")
	list := d.array(d.bounded(v.Get("records"), "records"), "records", true)
	if d.err != nil {
		return nil, d.err
	}
	hs := make([]policy.ChannelHealth, 0, len(list))
	for i, c := range list {
		p := "records[" + strconv.Itoa(i) + "]"
		h, err := decodeHealth(c, p)
		if err == nil && policy.ValidHealth(i, h) != nil {
			err = fmt.Errorf("%s: not a record SharedWrites answered", p)
		}
		if err != nil {
			return nil, err // only what SharedWrites answered comes back
		}
		hs = append(hs, h)
	}
	m.state.NoteShared(hs, false)
	var w writer
	w.beginObject("")
	w.int("held", int64(len(m.state.SharedHeld())))
	w.endObject()
	return w.b, nil
}
