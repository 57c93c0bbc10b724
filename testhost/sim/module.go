package sim

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/tidwall/gjson"
)

// Module is one instance of the built wasm policy module, driven the way the
// shim drives it: JSON in, JSON out, one call at a time. Every call that
// fails (an Extism error or a trap) on input the simulator built is an
// invariant break, not an answer.
type Module struct {
	rt  *testhost.Runtime
	in  *testhost.Instance
	buf []byte
}

// Runtime compiles the repository's built module (rebuilding it first when
// its sources are newer), once per process.
func Runtime(ctx context.Context) (*testhost.Runtime, error) {
	root, err := testhost.RepoRoot()
	if err != nil {
		return nil, err
	}
	path, _, err := testhost.EnsureWasm(root)
	if err != nil {
		return nil, err
	}
	return testhost.Load(ctx, path)
}

// restoreTakesTime records, per runtime, whether the module's restore takes
// the caller's time (`{"nowMs":…,"channels":[…]}`) or only the health.
var restoreTakesTime sync.Map

// restoreInput wraps a snapshot for the module's restore.
func (m *Module) restoreInput(snap []byte, now int64) []byte {
	v, ok := restoreTakesTime.Load(m.rt)
	if !ok {
		_, err := m.call("restore", []byte(`{"nowMs":0,"channels":[]}`))
		v = err == nil
		restoreTakesTime.Store(m.rt, v)
	}
	if !v.(bool) || len(snap) < 2 {
		return snap
	}
	return append(strconv.AppendInt([]byte(`{"nowMs":`), now, 10), append([]byte(","), snap[1:]...)...)
}

// restoreTakesLive records, per runtime, whether the module's restore takes
// `live` (older modules refuse the key).
var restoreTakesLive sync.Map

// liveInput marks a restore input (restoreInput's) as news received at its
// nowMs, when the module knows `live`; an older module gets it unmarked.
func (m *Module) liveInput(in []byte) []byte {
	v, ok := restoreTakesLive.Load(m.rt)
	if !ok {
		_, err := m.call("restore", []byte(`{"nowMs":0,"live":true,"channels":[]}`))
		v = err == nil
		restoreTakesLive.Store(m.rt, v)
	}
	if !v.(bool) || len(in) < 2 || in[0] != '{' {
		return in
	}
	return append([]byte(`{"live":true,`), in[1:]...)
}

// persists records, per runtime, whether the module answers `persist`
// (older modules have no such export: their file was the snapshot).
var persists sync.Map

// fileAt is what the shim writes to the health file at now (health.js
// save): the module's `persist` answer, the records it keeps; an older
// module's whole snapshot.
func (m *Module) fileAt(now int64) ([]byte, error) {
	v, ok := persists.Load(m.rt)
	if !ok {
		_, err := m.call("persist", []byte(`{"nowMs":0}`))
		v = err == nil
		persists.Store(m.rt, v)
	}
	if !v.(bool) {
		return m.call("snapshot", []byte("{}"))
	}
	out, err := m.call("persist", append(strconv.AppendInt([]byte(`{"nowMs":`), now, 10), '}'))
	if err != nil {
		return nil, err
	}
	return []byte(gjson.GetBytes(out, "health").Raw), nil
}

// newModule instantiates and configures a fresh module.
func newModule(rt *testhost.Runtime, configJSON string) (*Module, error) {
	in, err := rt.Instantiate(context.Background())
	if err != nil {
		return nil, err
	}
	m := &Module{rt: rt, in: in}
	if _, err := m.call("configure", []byte(configJSON)); err != nil {
		m.close()
		return nil, err
	}
	return m, nil
}

func (m *Module) close() {
	if m != nil && m.in != nil {
		_ = m.in.Close(context.Background())
	}
}

func (m *Module) call(export string, input []byte) ([]byte, error) {
	out, err := m.in.Call(export, input)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", export, err)
	}
	return out, nil
}

// decide sends one step input, built by fill into the module's reused buffer.
func (m *Module) decide(now int64, event func(b []byte) []byte) (Output, []byte, error) {
	b := append(m.buf[:0], `{"nowMs":`...)
	b = strconv.AppendInt(b, now, 10)
	b = append(b, `,"event":`...)
	b = event(b)
	b = append(b, '}')
	m.buf = b
	out, err := m.call("decide", b)
	if err != nil {
		return Output{}, b, err
	}
	return parseOutput(out), b, nil
}

// Channel is a model route as the module names it.
type Channel struct{ Provider, Model string }

func (c Channel) String() string { return c.Provider + "|" + c.Model }

// Output is a step output, decoded only as far as the invariants need.
type Output struct {
	Kind    string // the verdict's kind
	Swap    Channel
	DelayMs int64
	Reason  string
	// tool verdicts
	ToolAttempt  int64
	ToolOutcome  string
	ToolAttempts int64
	Effects      []Effect
}

// Effect is one decoded effect.
type Effect struct {
	Kind        string
	Channel     Channel // circuit, retry, give-up, probe, effort-dropped
	From, To    string  // circuit states
	FromCh, ToC Channel // failover
	Agent       string
	OpenUntilMs int64
	AtMs        int64
	DelayMs     int64
	Reason      string
	Home, Pick  Channel // failover (its home, when not From), session-route
	// The webhook notification on its audit entry, if any (notify.go): its
	// kind and the channel its body names (a returned one's is text).
	NotifyEvent   string
	NotifyCh      Channel
	NotifyTargets string // the receivers it names, as JSON: [0,1] or [1] (schedule.go simNotify)
}

func channelOf(v gjson.Result) Channel {
	return Channel{v.Get("provider").String(), v.Get("model").String()}
}

func parseOutput(out []byte) Output {
	v := gjson.ParseBytes(out)
	vd := v.Get("verdict")
	o := Output{Kind: vd.Get("kind").String()}
	switch o.Kind {
	case "swap":
		o.Swap = Channel{vd.Get("provider").String(), vd.Get("model").String()}
	case "wait":
		o.DelayMs = vd.Get("delayMs").Int()
	case "delegate":
		o.Reason = vd.Get("reason").String()
	case "tool-retry":
		o.ToolAttempt = vd.Get("attempt").Int()
		o.DelayMs = vd.Get("delayMs").Int()
	case "tool-return":
		o.ToolOutcome = vd.Get("outcome").String()
		o.ToolAttempts = vd.Get("attempts").Int()
	}
	v.Get("effects").ForEach(func(_, e gjson.Result) bool {
		fx := Effect{Kind: e.Get("kind").String(), Agent: e.Get("agent").String()}
		switch fx.Kind {
		case "circuit":
			fx.Channel = channelOf(e.Get("channel"))
			fx.From, fx.To = e.Get("from").String(), e.Get("to").String()
			fx.OpenUntilMs = e.Get("openUntilMs").Int()
		case "failover", "returned":
			fx.FromCh, fx.ToC = channelOf(e.Get("from")), channelOf(e.Get("to"))
			if h := e.Get("home"); h.Exists() {
				fx.Home = channelOf(h)
			}
		case "session-route":
			if h := e.Get("home"); h.Exists() {
				fx.Home = channelOf(h)
			}
			if p := e.Get("pick"); p.Exists() {
				fx.Pick = channelOf(p)
			}
		case "retry":
			fx.Channel = channelOf(e.Get("channel"))
			fx.DelayMs = e.Get("delayMs").Int()
		case "give-up":
			fx.Channel = channelOf(e.Get("channel"))
			fx.Reason = e.Get("reason").String()
		case "schedule-wake":
			fx.AtMs = e.Get("atMs").Int()
		case "quota-routed":
			fx.Reason = e.Get("cause").String()
		case "quota-wait":
			fx.Reason = e.Get("phase").String()
		case "probe", "effort-dropped":
			fx.Channel = channelOf(e.Get("channel"))
		case "slow": // the slow-call breaker (slowworld.go)
			fx.Channel = channelOf(e.Get("channel"))
			fx.From, fx.To = e.Get("from").String(), e.Get("to").String()
		}
		if n := e.Get("audit.notify"); n.Exists() {
			fx.NotifyEvent = n.Get("event").String()
			fx.NotifyTargets = n.Get("targets").Raw
			if c := n.Get("body.channel"); c.IsObject() {
				fx.NotifyCh = channelOf(c)
			} else {
				fx.NotifyCh = Channel{Provider: c.String()}
			}
		}
		o.Effects = append(o.Effects, fx)
		return true
	})
	return o
}

// appendStr appends s as a JSON string literal, as the module's codec does.
func appendStr(b []byte, s string) []byte { return codec.AppendString(b, s) }

// bareRequest is the input of a request from agent proposing ch, with
// nothing else said (no effort, no context size): a restart's checks and the
// clock worlds' hosts.
func bareRequest(agent string, ch Channel) func([]byte) []byte {
	return func(b []byte) []byte {
		b = append(b, `{"kind":"request","agent":`...)
		b = appendStr(b, agent)
		b = append(b, `,"proposed":`...)
		return append(appendChannel(b, ch), '}')
	}
}

func appendChannel(b []byte, c Channel) []byte {
	b = append(b, `{"provider":`...)
	b = appendStr(b, c.Provider)
	b = append(b, `,"model":`...)
	b = appendStr(b, c.Model)
	return append(b, '}')
}
