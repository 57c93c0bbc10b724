package codec

import (
	"errors"
	"fmt"
	"math"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// Exports names the module's exports, as wit/policy.wit's world declares them.
var Exports = []string{"configure", "decide", "snapshot", "restore"}

// Module is one policy instance behind the JSON contract. The zero value is
// unconfigured: every export but configure answers an error until configure succeeds.
type Module struct {
	state *policy.State
}

// ErrNotConfigured is returned by exports called before configure.
var ErrNotConfigured = errors.New("not configured: call configure first")

// Call dispatches an export by name.
func (m *Module) Call(export string, input []byte) ([]byte, error) {
	switch export {
	case "configure":
		return m.Configure(input)
	case "decide":
		return m.Decide(input)
	case "snapshot":
		return m.Snapshot(input)
	case "restore":
		return m.Restore(input)
	}
	return nil, fmt.Errorf("unknown export %q", export)
}

func parse(input []byte) (gjson.Result, error) {
	if !gjson.ValidBytes(input) {
		return gjson.Result{}, errors.New("input is not valid JSON")
	}
	return gjson.ParseBytes(input), nil
}

// Configure validates a config row and resets the module to a fresh state under it.
func (m *Module) Configure(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	cfg, err := decodeConfig(v)
	if err != nil {
		return nil, err
	}
	st, err := policy.NewState(cfg)
	if err != nil {
		return nil, err
	}
	m.state = st
	var w writer
	w.beginObject("")
	w.beginObject("config")
	writeConfig(&w, cfg)
	w.endObject()
	w.endObject()
	return w.b, nil
}

// Decide runs one policy step.
func (m *Module) Decide(input []byte) ([]byte, error) {
	if m.state == nil {
		return nil, ErrNotConfigured
	}
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	now, ev, err := decodeStepInput(v)
	if err != nil {
		return nil, err
	}
	out := policy.Step(m.state, now, ev)
	var w writer
	writeOutput(&w, out)
	return w.b, nil
}

// Snapshot encodes the channel health worth persisting.
func (m *Module) Snapshot([]byte) ([]byte, error) {
	if m.state == nil {
		return nil, ErrNotConfigured
	}
	var w writer
	w.beginObject("")
	w.beginArray("channels")
	for _, h := range m.state.Health() {
		w.beginObject("")
		writeChannel(&w, "channel", h.Channel)
		w.str("state", string(h.State))
		w.int("failures", int64(h.Failures))
		w.int("opens", int64(h.Opens))
		w.int("openUntilMs", h.OpenUntilMs)
		w.str("lastCode", h.LastCode)
		w.int("changedAtMs", h.ChangedAtMs)
		w.endObject()
	}
	w.endArray()
	w.endObject()
	return w.b, nil
}

// Restore merges persisted or shared channel health: a record replaces the
// module's own only when it changed later. It is all or nothing: a bad record
// rejects the whole batch, and the shim sets the file aside.
func (m *Module) Restore(input []byte) ([]byte, error) {
	if m.state == nil {
		return nil, ErrNotConfigured
	}
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "health"}
	d.object(v, "", "channels")
	var hs []policy.ChannelHealth
	for i, c := range d.array(v.Get("channels"), "channels", true) {
		p := fmt.Sprintf("channels[%d]", i)
		if !d.object(c, p, "channel", "state", "failures", "opens", "openUntilMs", "lastCode", "changedAtMs") {
			break
		}
		f, _ := d.uint(c.Get("failures"), p+".failures", true, math.MaxInt32)
		opens, _ := d.uint(c.Get("opens"), p+".opens", false, math.MaxInt32)
		until, _ := d.uint(c.Get("openUntilMs"), p+".openUntilMs", true, maxMs)
		changed, _ := d.uint(c.Get("changedAtMs"), p+".changedAtMs", false, maxMs)
		hs = append(hs, policy.ChannelHealth{
			Channel:     d.channel(c.Get("channel"), p+".channel"),
			State:       policy.CircuitState(d.oneOf(c.Get("state"), p+".state", true, "closed", "open", "half-open")),
			Failures:    int(f),
			Opens:       int(opens),
			OpenUntilMs: int64(until),
			ChangedAtMs: int64(changed),
			LastCode:    d.str(c.Get("lastCode"), p+".lastCode", true),
		})
	}
	if d.err != nil {
		return nil, d.err
	}
	// Merge validates the whole batch before touching the state.
	adopted, err := m.state.Merge(0, hs)
	if err != nil {
		return nil, fmt.Errorf("health %w", err) // `health "channels[0].state": ...`
	}
	var w writer
	w.beginObject("")
	w.int("channels", int64(len(hs)))
	w.int("adopted", int64(adopted))
	w.endObject()
	return w.b, nil
}
