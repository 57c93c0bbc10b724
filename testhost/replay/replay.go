// Package replay is the what-if replay: it feeds the policy inputs an audit
// log recorded (`{"type":"input",...}` lines: every configure, restore and
// decide input, as the module received it) to two instances of the built
// module, one under the recorded config and one under another, and reports
// decision by decision where they differ, with totals.
//
// The replay holds the world fixed: the same failures arrive in the same
// order. Once config B routes an agent elsewhere than the recording did, the
// recorded failures of that agent's requests happened on a channel B did not
// send it to; B is not asked about those (the report says so), and its
// picture of that agent is an estimate from then on.
package replay

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dsh-resilience/dsh-resilience/testhost"
	"github.com/tidwall/gjson"
)

// Input is one recorded policy input.
type Input struct {
	Export  string // configure, restore, decide
	NowMs   int64
	Body    []byte // the export's JSON input
	Rebuild bool   // a configure that rebuilt the instance after a trap
	Live    bool   // a restore of news from a running process (WIT restore-input.live)
}

// Read takes the input records out of an audit log (other lines are skipped).
func Read(r io.Reader) ([]Input, error) {
	var out []Input
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if !gjson.ValidBytes(line) {
			return nil, fmt.Errorf("line %d: not JSON", n)
		}
		v := gjson.ParseBytes(line)
		if v.Get("type").String() != "input" {
			continue
		}
		in := Input{Export: v.Get("export").String(), NowMs: v.Get("nowMs").Int(), Rebuild: v.Get("rebuild").Bool(), Live: v.Get("live").Bool()}
		switch in.Export {
		case "configure":
			in.Body = []byte(v.Get("config").Raw)
		case "restore":
			in.Body = []byte(v.Get("health").Raw) // given its time when replayed (restoreInput)
		case "decide":
			in.Body = []byte(fmt.Sprintf(`{"nowMs":%d,"event":%s}`, in.NowMs, v.Get("event").Raw))
		default:
			return nil, fmt.Errorf("line %d: unknown export %q", n, in.Export)
		}
		out = append(out, in)
	}
	return out, sc.Err()
}

// Totals is what one config did over the log.
type Totals struct {
	Decisions int
	Failovers int
	Spills    int   // requests sent elsewhere after spillAfter failures (the channel kept closed)
	Wasted    int   // requests this config sent that failed (a before-host failure it was asked about)
	Retries   int   // the plugin's same-channel retries: requests sent again to a channel that just failed
	HeldMs    int64 // time agents were held in waits
	GiveUps   map[string]int
	Skipped   int // failures of requests this config routed elsewhere
}

// Diff is one decision where the configs part.
type Diff struct {
	AtMs  int64
	Event string // a short description of the event
	A, B  string // the two decisions
}

// Report is the replay's outcome.
type Report struct {
	Diffs []Diff
	A, B  Totals
	// FirstFailover is, per agent and incident, when each config first
	// failed over (0: it did not).
	Earlier []string
}

type side struct {
	in     *testhost.Instance
	t      Totals
	routed map[string]string // agent -> provider its latest request went to
	// incident: agent -> time of its first failure since a success, and of its first failover
	failedAt, failoverAt map[string]int64
}

// Run replays inputs under the recorded config (A) and configB.
func Run(ctx context.Context, rt *testhost.Runtime, inputs []Input, configB []byte) (*Report, error) {
	var sides [2]*side
	for i := range sides {
		in, err := rt.Instantiate(ctx)
		if err != nil {
			return nil, err
		}
		defer in.Close(ctx)
		sides[i] = &side{in: in, t: Totals{GiveUps: map[string]int{}}, routed: map[string]string{}, failedAt: map[string]int64{}, failoverAt: map[string]int64{}}
	}
	rep := &Report{}
	configured, reconfigured := false, false
	var now int64 // the latest time the log gave: a restore is judged then
	for _, inp := range inputs {
		if inp.NowMs != 0 {
			now = inp.NowMs
		}
		switch inp.Export {
		case "configure":
			// The first configure starts both; a later one is a live
			// reconfigure (A takes the new config, B keeps its own, and the
			// health restore that follows is A's) or a rebuild after a trap
			// (each side starts a fresh instance with its own config and health).
			for i, s := range sides {
				body := inp.Body
				if i == 1 {
					body = configB
				}
				if configured && i == 1 && !inp.Rebuild {
					continue
				}
				var health []byte
				if configured {
					var err error
					if health, err = s.in.Call("snapshot", []byte("{}")); err != nil {
						return nil, fmt.Errorf("snapshot: %w", err)
					}
				}
				if _, err := s.in.Call("configure", body); err != nil {
					return nil, fmt.Errorf("configure %s: %w", []string{"A (recorded)", "B"}[i], err)
				}
				if health != nil && inp.Rebuild {
					if _, err := s.in.Call("restore", restoreInput(health, now)); err != nil {
						return nil, fmt.Errorf("restore: %w", err)
					}
				}
			}
			reconfigured = configured && !inp.Rebuild
			configured = true
		case "restore":
			if reconfigured {
				// The health a live reconfigure carried over: A's. B kept its state.
				reconfigured = false
				if _, err := sides[0].in.Call("restore", restoreInput(inp.Body, now)); err != nil {
					return nil, fmt.Errorf("restore: %w", err)
				}
				continue
			}
			for _, s := range sides {
				if _, err := s.in.Call("restore", liveInput(restoreInput(inp.Body, now), inp.Live)); err != nil {
					return nil, fmt.Errorf("restore: %w", err)
				}
			}
		case "decide":
			// A live reconfigure's carried health comes right after its
			// configure or not at all (the shim records a restore only when
			// it adopted something); a restore after a decision is shared
			// health, both sides' to take.
			reconfigured = false
			if !configured {
				continue // the log starts mid-run (rotated): nothing to compare against
			}
			ev := gjson.GetBytes(inp.Body, "event")
			kind := ev.Get("kind").String()
			if kind == "restore-mark" {
				// A log from before marks travelled in health: the mark as the
				// provider's health record that now carries it, both sides'.
				for _, s := range sides {
					if _, err := s.in.Call("restore", restoreInput(markRecord(ev), inp.NowMs)); err != nil {
						return nil, fmt.Errorf("restore (restore-mark): %w", err)
					}
				}
				continue
			}
			agent := ev.Get("agent").String()
			var got [2]string
			for i, s := range sides {
				if kind == "request-error" && s.routed[agent] != "" && s.routed[agent] != ev.Get("provider").String() {
					s.t.Skipped++
					got[i] = "(not asked: it had routed " + agent + " to " + s.routed[agent] + ")"
					continue
				}
				if kind == "request-error" && ev.Get("phase").String() == "before-host" {
					s.t.Wasted++
				}
				out, err := s.in.Call("decide", inp.Body)
				if err != nil {
					return nil, fmt.Errorf("decide %s: %w", inp.Body, err)
				}
				got[i] = s.account(inp.NowMs, kind, agent, ev, out)
			}
			if got[0] != got[1] {
				rep.Diffs = append(rep.Diffs, Diff{AtMs: inp.NowMs, Event: describe(kind, ev), A: got[0], B: got[1]})
			}
		}
	}
	rep.A, rep.B = sides[0].t, sides[1].t
	for agent, a := range sides[0].failoverAt {
		if b, ok := sides[1].failoverAt[agent]; ok && a != b {
			d := time.Duration(a-b) * time.Millisecond
			word := "earlier"
			if d < 0 {
				d, word = -d, "later"
			}
			rep.Earlier = append(rep.Earlier, fmt.Sprintf("B failed %s over %s %s than A (A at %s)", agent, d, word, clock(a)))
		}
	}
	sort.Strings(rep.Earlier)
	return rep, nil
}

// account tallies one decision and renders it for comparison.
func (s *side) account(now int64, kind, agent string, ev gjson.Result, out []byte) string {
	s.t.Decisions++
	v := gjson.ParseBytes(out)
	vd := v.Get("verdict")
	var b strings.Builder
	b.WriteString(vd.Get("kind").String())
	switch vd.Get("kind").String() {
	case "swap":
		fmt.Fprintf(&b, " to %s/%s", vd.Get("provider").String(), vd.Get("model").String())
		s.routed[agent] = vd.Get("provider").String()
	case "pass":
		if kind == "request" {
			s.routed[agent] = ev.Get("proposed.provider").String()
		}
	case "wait":
		fmt.Fprintf(&b, " %s", time.Duration(vd.Get("delayMs").Int())*time.Millisecond)
		s.t.HeldMs += vd.Get("delayMs").Int()
	case "delegate":
		if r := vd.Get("reason").String(); r != "" {
			fmt.Fprintf(&b, " (%s)", r)
			s.t.GiveUps[r]++
		}
	}
	if kind == "request-error" {
		if _, ok := s.failedAt[agent]; !ok {
			s.failedAt[agent] = now
		}
	}
	if kind == "settled" {
		delete(s.failedAt, agent)
	}
	v.Get("effects").ForEach(func(_, e gjson.Result) bool {
		switch e.Get("kind").String() {
		case "failover":
			s.t.Failovers++
			if _, ok := s.failoverAt[agent]; !ok {
				s.failoverAt[agent] = now
			}
			fmt.Fprintf(&b, ", failover to %s/%s", e.Get("to.provider").String(), e.Get("to.model").String())
		case "spill": // the request left its channel too: when, for "earlier than"
			s.t.Spills++
			if _, ok := s.failoverAt[agent]; !ok {
				s.failoverAt[agent] = now
			}
			fmt.Fprintf(&b, ", spill to %s/%s", e.Get("to.provider").String(), e.Get("to.model").String())
		case "retry":
			if e.Get("channel.provider").String() == ev.Get("provider").String() {
				s.t.Retries++
			}
		case "circuit":
			fmt.Fprintf(&b, ", %s/%s %s->%s", e.Get("channel.provider").String(), e.Get("channel.model").String(), e.Get("from").String(), e.Get("to").String())
		}
		return true
	})
	return b.String()
}

func describe(kind string, ev gjson.Result) string {
	switch kind {
	case "request":
		return fmt.Sprintf("%s asks for %s/%s", ev.Get("agent").String(), ev.Get("proposed.provider").String(), ev.Get("proposed.model").String())
	case "request-error":
		return fmt.Sprintf("%s failed on %s: %s (%s)", ev.Get("agent").String(), ev.Get("provider").String(), ev.Get("failure.code").String(), ev.Get("phase").String())
	case "probe-result":
		return fmt.Sprintf("probe of %s/%s ok=%v", ev.Get("channel.provider").String(), ev.Get("channel.model").String(), ev.Get("ok").Bool())
	}
	if a := ev.Get("agent").String(); a != "" {
		return kind + " " + a
	}
	return kind
}

func clock(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05.000") }

// Print writes the report.
func (r *Report) Print(w io.Writer, nameB string) {
	for _, d := range r.Diffs {
		fmt.Fprintf(w, "%s  %s\n    A (recorded): %s\n    B (%s): %s\n", clock(d.AtMs), d.Event, d.A, nameB, d.B)
	}
	for _, e := range r.Earlier {
		fmt.Fprintln(w, e)
	}
	fmt.Fprintf(w, "\n%-28s %14s %14s\n", "", "A (recorded)", "B")
	row := func(name string, a, b any) { fmt.Fprintf(w, "%-28s %14v %14v\n", name, a, b) }
	row("decisions differing", len(r.Diffs), "")
	row("failovers", r.A.Failovers, r.B.Failovers)
	row("spills", r.A.Spills, r.B.Spills)
	row("requests wasted (failed)", r.A.Wasted, r.B.Wasted)
	row("same-channel retries", r.A.Retries, r.B.Retries)
	row("time held", time.Duration(r.A.HeldMs)*time.Millisecond, time.Duration(r.B.HeldMs)*time.Millisecond)
	row("give-ups", total(r.A.GiveUps), total(r.B.GiveUps))
	reasons := map[string]bool{}
	for k := range r.A.GiveUps {
		reasons[k] = true
	}
	for k := range r.B.GiveUps {
		reasons[k] = true
	}
	keys := make([]string, 0, len(reasons))
	for k := range reasons {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		row("  "+k, r.A.GiveUps[k], r.B.GiveUps[k])
	}
	row("failures not asked about", r.A.Skipped, r.B.Skipped)
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Config reads a config file: JSON, the plugin row's config (its `chain`, keys as in docs/configuration.md).
func Config(data []byte) ([]byte, error) {
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("config: %w (the file is the row's config as JSON)", err)
	}
	return data, nil
}

// restoreInput is a health document as the restore export takes it: its
// channels at the time nowMs (WIT restore-input). A log's restore record
// carries the time it was restored at; an older one, the latest time before it.
func restoreInput(health []byte, nowMs int64) []byte {
	channels := gjson.GetBytes(health, "channels").Raw
	if channels == "" {
		channels = "[]"
	}
	if at := gjson.GetBytes(health, "nowMs"); at.Exists() {
		nowMs = at.Int()
	}
	return []byte(fmt.Sprintf(`{"nowMs":%d,"channels":%s}`, nowMs, channels))
}

// liveInput marks a restore input as news received at its time (the shim
// records `live` on such restores): an open the module has not seen starts then.
func liveInput(in []byte, live bool) []byte {
	if !live {
		return in
	}
	return append([]byte(`{"live":true,`), in[1:]...)
}

// markRecord is a recorded restore-mark event (logs written before marks
// travelled in health) as the provider health record that carries it now.
func markRecord(ev gjson.Result) []byte {
	provider, _ := json.Marshal(ev.Get("provider").String())
	at := ev.Get("markedAtMs").Int()
	return []byte(fmt.Sprintf(`{"channels":[{"channel":{"provider":%s,"model":"*"},"state":"open","failures":0,"opens":1,"openUntilMs":%d,"lastCode":"","changedAtMs":%d,"version":1,"markedAtMs":%d}]}`,
		provider, ev.Get("untilMs").Int(), at, at))
}
