package codec

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/dsh-resilience/dsh-resilience/policy/redact"
	"github.com/tidwall/gjson"
)

// Exports names the module's exports, as wit/policy.wit's world declares them.
// The policy's own come first; each pure transformation the shim asks of the
// module (a report, a migration, a view) adds its name in its own file (register).
var Exports = []string{"configure", "resolve", "decide", "snapshot", "restore", "inspect"}

// An export beside the policy's own: it reads the module (never changes the
// policy state) or keeps a state of its own in the instance (extra).
type export func(m *Module, input []byte) ([]byte, error)

var others = map[string]export{}

// register adds an export, from an init in the file that holds it.
func register(name string, f export) {
	if _, dup := others[name]; dup {
		panic("codec: export " + name + " registered twice")
	}
	others[name] = f
	Exports = append(Exports, name)
}

// Module is one policy instance behind the JSON contract. The zero value is
// unconfigured: every export but configure answers an error until configure succeeds.
type Module struct {
	state *policy.State
	// ShareOutput makes Decide answer from one buffer reused by every call,
	// valid until the next call: for the wasm entry, which copies it out at
	// once. A decision then allocates no output or effect slices.
	ShareOutput bool
	out         writer
	audit       auditor // each audited effect's record and log line (audit.go)
	fx          []policy.Effect
	hostRetries hostRetryCache // the last host retry policy decoded
	// redactor takes credentials out of provider text (redact.go): the
	// values the shim handed over, kept beside the policy state, never in it.
	redactor redact.Redactor
	// extra holds the state an export beside the policy keeps between its
	// calls (a report read in batches), by the export's name.
	extra map[string]any
}

// Agents is how many agents the policy holds (0 before configure): the wasm
// entry paces its collector by it.
func (m *Module) Agents() int {
	if m.state == nil {
		return 0
	}
	return m.state.Agents()
}

// ErrNotConfigured is returned by exports called before configure.
var ErrNotConfigured = errors.New("not configured: call configure first")

// Call dispatches an export by name.
func (m *Module) Call(export string, input []byte) ([]byte, error) {
	switch export {
	case "configure":
		return m.Configure(input)
	case "resolve":
		return Resolve(input)
	case "decide":
		return m.Decide(input)
	case "snapshot":
		return m.Snapshot(input)
	case "restore":
		return m.Restore(input)
	case "inspect":
		return m.Inspect(input)
	}
	if f, ok := others[export]; ok {
		return f(m, input)
	}
	return nil, fmt.Errorf("unknown export %q", export)
}

// configuredInput is an export's input once the module is configured: the
// document, and a decoder that names its fields under prefix.
func (m *Module) configuredInput(input []byte, prefix string) (gjson.Result, decoder, error) {
	if m.state == nil {
		return gjson.Result{}, decoder{}, ErrNotConfigured
	}
	v, err := parse(input)
	return v, decoder{prefix: prefix}, err
}

func parse(input []byte) (gjson.Result, error) {
	if tooDeep(input, maxDepth) {
		return gjson.Result{}, fmt.Errorf("input nests deeper than %d levels", maxDepth)
	}
	if !gjson.ValidBytes(input) {
		return gjson.Result{}, errors.New("input is not valid JSON")
	}
	return gjson.ParseBytes(input), nil
}

// Configure validates a config row and resets the module to a fresh state under it.
func (m *Module) Configure(input []byte) ([]byte, error) {
	cfg, err := readConfig(input)
	if err != nil {
		return nil, err
	}
	st, err := policy.NewState(cfg)
	if err != nil {
		return nil, err
	}
	if m.state != nil {
		st.KeepNotified(m.state)
	}
	m.state = st
	return configured(cfg), nil
}

// Resolve checks a config and answers what Configure would, touching no
// state: the shim's config checks and the settings card's defaults ask it
// of the running instance instead of bringing up a spare one (10-20 ms of
// the main thread each, before the first request).
func Resolve(input []byte) ([]byte, error) {
	cfg, err := readConfig(input)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return configured(cfg), nil
}

func readConfig(input []byte) (policy.Config, error) {
	v, err := parse(input)
	if err != nil {
		return policy.Config{}, err
	}
	return decodeConfig(v)
}

func configured(cfg policy.Config) []byte {
	var w writer
	w.beginObject("")
	w.beginObject("config")
	writeConfig(&w, cfg)
	w.endObject()
	w.boolean("hedging", cfg.Hedge.On())
	if len(cfg.Notify) > 0 {
		// What the replay's configure record holds instead of the row: no receiver's token.
		w.beginObject("recorded")
		writeConfig(&w, cfg.Loggable())
		w.endObject()
	}
	w.endObject()
	return w.b
}

// Decide runs one policy step.
func (m *Module) Decide(input []byte) ([]byte, error) {
	if m.state == nil {
		return nil, ErrNotConfigured
	}
	now, ev, ok := fastStep(input, &m.hostRetries)
	if !ok {
		v, err := parse(input)
		if err != nil {
			return nil, err
		}
		if now, ev, err = decodeStepInput(v, &m.hostRetries); err != nil {
			return nil, err
		}
	}
	ev, taken := m.redactEvent(ev)
	out := policy.StepInto(m.state, now, ev, m.fx)
	m.out.reset()
	if m.audit.maxFailovers == nil {
		m.audit.maxFailovers = func() int { return m.state.Config().MaxFailovers }
	}
	m.audit.state, m.audit.now = m.state, now
	writeOutput(&m.out, out, &m.audit, taken)
	clear(out.Effects) // hold no effect past the call
	m.fx = out.Effects[:0]
	if m.ShareOutput {
		return m.out.b, nil
	}
	return bytes.Clone(m.out.b), nil
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
		writeHealth(&w, "", h)
	}
	w.endArray()
	if held := m.state.SharedHeld(); len(held) > 0 { // absent without a shared store
		w.beginArray("shared")
		for _, h := range held {
			writeHealth(&w, "", h)
		}
		w.endArray()
	}
	writeSlowHealth(&w, m.state.SlowHealth())
	if m.state.ColdPass() { // policy/coldpass.go; absent: false
		w.boolean("coldPass", true)
	}
	w.endObject()
	return w.b, nil
}

// writeHealth writes one record (channel-health): as member k, or the
// next element of an array when k is "".
func writeHealth(w *writer, k memberKey, h policy.ChannelHealth) {
	w.beginObject(k)
	writeChannel(w, "channel", h.Channel)
	w.str("state", string(h.State))
	w.int("failures", int64(h.Failures))
	w.int("opens", int64(h.Opens))
	w.int("openUntilMs", h.OpenUntilMs)
	w.str("lastCode", h.LastCode)
	w.int("changedAtMs", h.ChangedAtMs)
	w.int("version", int64(h.Version))
	if h.MarkedAtMs != 0 {
		w.int("markedAtMs", h.MarkedAtMs)
	}
	if h.LastFailureMs > 0 { // only a burst in progress (or a trip's) has one
		w.int("lastFailureMs", h.LastFailureMs)
	}
	w.endObject()
}

// maxHealthRecords bounds one restore: far beyond any real chain (100
// channels of 20 providers is a large one), small enough that a runaway file
// cannot hold the module for seconds. A larger batch is refused whole, and the
// shim sets its file aside.
const maxHealthRecords = 10_000

// maxSkipReasons bounds how many skipped records are named in the answer.
const maxSkipReasons = 5

// Restore merges persisted or shared channel health at the caller's time
// (nowMs: a record's open time is counted from then, policy/merge.go; live:
// the health is news from a running process, received at nowMs;
// fromShared: the records came from the shared store, which the module notes
// as holding them; shared: a snapshot's own list of what that store holds,
// passed back to a new instance, policy/shared.go): a
// record replaces the module's own only when it wins the merge order. A bad record (wrong type, unknown
// key, a field beyond its bound) is skipped and named, and the others are
// still taken; only a document that is not a health batch at all is refused.
func (m *Module) Restore(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "health")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "nowMs", "channels", "slow", "live", "coldPass", "shared", "fromShared") // slow, coldPass: a snapshot's own, passed back and ignored
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	live := d.boolean(v.Get("live"), "live")
	fromShared := d.boolean(v.Get("fromShared"), "fromShared")
	list := d.array(d.bounded(v.Get("channels"), "channels"), "channels", true)
	held := d.array(d.bounded(v.Get("shared"), "shared"), "shared", false)
	if d.err != nil {
		return nil, d.err
	}
	hs := make([]policy.ChannelHealth, 0, len(list))
	var skipped []string
	for i, c := range list {
		h, err := decodeHealth(c, "channels["+strconv.Itoa(i)+"]")
		if err != nil {
			skipped = append(skipped, err.Error()) // `health "channels[3].failures": ...`
			continue
		}
		if err := policy.ValidHealth(i, h); err != nil {
			skipped = append(skipped, "health "+err.Error())
			continue
		}
		hs = append(hs, h)
	}
	merge := m.state.Merge // a restore at start: records as their writers dated them
	if live {
		merge = m.state.MergeLive // news: an unseen open starts at its receipt, now
	}
	fresh := make([]policy.ChannelHealth, 0, len(hs))
	for _, h := range hs {
		if !m.state.Forgotten(int64(now), h) { // a closed record past the prune horizon says nothing about now
			fresh = append(fresh, h)
		}
	}
	adopted, _ := merge(int64(now), fresh) // every record in hs is valid
	if fromShared {
		m.state.NoteShared(hs, !live) // a read of the store says what it holds now
	}
	if len(held) > 0 {
		known := make([]policy.ChannelHealth, 0, len(held))
		for i, c := range held {
			if h, err := decodeHealth(c, "shared["+strconv.Itoa(i)+"]"); err == nil {
				known = append(known, h) // a bad one is not noted (NoteShared checks the rest): it costs one write
			}
		}
		m.state.NoteShared(known, false)
	}
	var w writer
	w.beginObject("")
	w.int("channels", int64(len(list)))
	w.int("adopted", int64(adopted))
	if len(skipped) > 0 {
		w.int("skipped", int64(len(skipped)))
		w.beginArray("skipReasons")
		for _, r := range skipped[:min(len(skipped), maxSkipReasons)] {
			w.b = appendString(w.sep(w.b), r)
		}
		w.endArray()
	}
	w.endObject()
	return w.b, nil
}

// bounded refuses a list of more than maxHealthRecords, naming it.
func (d *decoder) bounded(records gjson.Result, name string) gjson.Result {
	if d.err == nil && records.IsArray() {
		n := 0
		records.ForEach(func(_, _ gjson.Result) bool { n++; return n <= maxHealthRecords })
		if n > maxHealthRecords {
			d.fail(name, "more than %d records", maxHealthRecords)
		}
	}
	return records
}

// decodeHealth reads one record of a health batch, at path p.
func decodeHealth(c gjson.Result, p string) (policy.ChannelHealth, error) {
	d := decoder{prefix: "health"}
	if !d.object(c, p, "channel", "state", "failures", "opens", "openUntilMs", "lastCode", "changedAtMs", "version", "markedAtMs", "lastFailureMs") {
		return policy.ChannelHealth{}, d.err
	}
	f, _ := d.uint(c.Get("failures"), p+".failures", true, math.MaxInt32)
	opens, _ := d.uint(c.Get("opens"), p+".opens", false, math.MaxInt32)
	until, _ := d.uint(c.Get("openUntilMs"), p+".openUntilMs", true, maxMs)
	changed, _ := d.uint(c.Get("changedAtMs"), p+".changedAtMs", false, maxMs)
	version, _ := d.uint(c.Get("version"), p+".version", false, maxMs)
	marked, _ := d.uint(c.Get("markedAtMs"), p+".markedAtMs", false, maxMs)
	lastFailure, _ := d.uint(c.Get("lastFailureMs"), p+".lastFailureMs", false, maxMs)
	h := policy.ChannelHealth{
		Channel:       d.channel(c.Get("channel"), p+".channel"),
		State:         policy.CircuitState(d.oneOf(c.Get("state"), p+".state", true, "closed", "open", "half-open")),
		Failures:      int(f),
		Opens:         int(opens),
		OpenUntilMs:   int64(until),
		ChangedAtMs:   int64(changed),
		Version:       version,
		LastCode:      d.str(c.Get("lastCode"), p+".lastCode", true),
		LastFailureMs: int64(lastFailure),
		MarkedAtMs:    int64(marked),
	}
	return h, d.err
}
