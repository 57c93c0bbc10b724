package testhost

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/stretchr/testify/require"
)

// answer is one export call's outcome in a form both sides share: the output,
// or the Extism error string (wasm) / the export name and the error (native,
// as plugin/main.go reports it).
type answer struct {
	out []byte
	err string
}

func (a answer) String() string {
	if a.err != "" {
		return "error: " + a.err
	}
	return string(a.out)
}

func wasmAnswer(t testing.TB, in *Instance, export string, input []byte) answer {
	t.Helper()
	out, err := in.Call(export, input)
	if err != nil {
		var pe *PluginError
		require.ErrorAs(t, err, &pe, "%s %s: not a plugin error", export, input)
		return answer{err: pe.Message}
	}
	return answer{out: out}
}

// nativeAnswer runs the codec the way plugin/main.go's call does: an error is
// "<export>: <err>", a panic "<export>: internal error: <value>".
func nativeAnswer(m *codec.Module, export string, input []byte) (a answer) {
	defer func() {
		if r := recover(); r != nil {
			a = answer{err: fmt.Sprintf("%s: internal error: %v", export, r)}
		}
	}()
	out, err := m.Call(export, input)
	if err != nil {
		return answer{err: export + ": " + err.Error()}
	}
	if out == nil {
		out = []byte{}
	}
	return answer{out: out}
}

func requireSame(t testing.TB, i int, export string, input []byte, wasm, native answer) {
	t.Helper()
	if wasm.err != native.err || !bytes.Equal(wasm.out, native.out) {
		in := string(input)
		if len(in) > 400 {
			in = in[:400] + "..."
		}
		t.Fatalf("call %d: %s %s\n wasm:   %s\n native: %s", i, export, in, wasm, native)
	}
}

// Every scenario step, through wasm and natively, answers byte for byte the same.
func TestDifferentialScenarios(t *testing.T) { differential(t, scenarios()) }

// differential runs each scenario through the wasm module and the native codec
// in lockstep, requiring the same answer byte for byte at every step.
func differential(t *testing.T, scs []scenario) {
	for _, sc := range scs {
		t.Run(sc.name, func(t *testing.T) {
			var ins [2]*Instance
			var natives [2]codec.Module
			for i, s := range sc.steps {
				if ins[s.on] == nil {
					ins[s.on] = newInstance(t)
				}
				w := wasmAnswer(t, ins[s.on], s.export, []byte(s.in))
				n := nativeAnswer(&natives[s.on], s.export, []byte(s.in))
				requireSame(t, i, s.export, []byte(s.in), w, n)
			}
		})
	}
}

// eventGen makes a random but plausible stream of calls: mostly decide
// events for a handful of agents over a few channels, with snapshots,
// restores, reconfigurations and malformed documents mixed in.
type eventGen struct {
	r         *rand.Rand
	now       int64
	lastProv  map[string]string // agent JSON -> provider of the channel it last proposed
	snapshots [][]byte
	written   []byte // the last shared-writes answer's records, as shared-written takes them
	chain     []ch
	quota     bool // the config has pools and quota
	// folds draws the old marks files fold-marks folds, every 400th call:
	// apart from the stream, so the rest of it stays what it was.
	folds *rand.Rand
	calls int
}

var (
	// {a/b, c} and {a, b/c} are distinct channels whose joined names collide.
	genChannels = []ch{chA, chB, chC, {"alt", "alt-d"}, {"ghost", "g-1"}, {"ghost", "g-2"}, {"a/b", "c"}, {"a", "b/c"}}
	// Agent names as JSON string literals, some with escapes the writer must
	// re-encode: non-ASCII, a surrogate pair, a lone surrogate, control characters.
	genAgents = []string{`"a1"`, `"a2"`, `"a3"`, `"a4"`, `"a5"`, `"sub-agent/7"`, `"代理-七"`,
		`"\u00e9t\u00e9"`, `"emoji-\ud83d\ude00"`, `"lone-\ud800"`, `"ctl-\u0001\n\"q\""`}
	genCodes = []string{"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "EMPTY_RESPONSE", "STREAM_CLOSED",
		"MALFORMED_RESPONSE", "LLM_STREAM_IDLE_TIMEOUT", "QUOTA", "HTTP_402", "UNKNOWN_MODEL", "MODEL_NOT_FOUND",
		"NO_ADAPTER", "MISSING_CREDENTIAL", "AUTH", "INVALID_CREDENTIAL", "INVALID_REQUEST", "CONTEXT_WINDOW_EXCEEDED",
		"ABORTED", "UNSUPPORTED_REASONING_EFFORT", "WEIRD", "rate_limit", "", "HTTP_503"}
	genMessages = []string{"", "Insufficient Balance", "insufficient_quota: You exceeded your current quota",
		"余额不足", "您的账户额度已用完，请充值", "当前分组上游负载已饱和，请稍后再试", "模型不存在", "超出限额",
		"您的配额已用尽", "账户欠费", "rate limit exceeded", "Service Unavailable", "usage limit reached for this month",
		"The model `x` does not exist", "Payment Required", "upstream connect error", "请求过于频繁，请稍后再试"}
	genStatuses = []int{0, 0, 0, 400, 401, 402, 403, 404, 408, 429, 500, 502, 503, 999}
	genModes    = []string{"normal", "normal", "off", "aggressive"}
)

func newEventGen(seed int64) *eventGen {
	return &eventGen{r: rand.New(rand.NewSource(seed)), folds: rand.New(rand.NewSource(seed + 1)), now: 1_700_000_000_000, lastProv: map[string]string{}}
}

func (g *eventGen) pick(n int) int { return g.r.Intn(n) }

func (g *eventGen) channel() ch { return genChannels[g.pick(len(genChannels))] }

func (g *eventGen) config() string {
	n := g.pick(5) // an empty chain now and then: the plugin then only observes
	perm := g.r.Perm(len(genChannels))[:n]
	g.chain = nil
	for _, i := range perm {
		g.chain = append(g.chain, genChannels[i])
	}
	var extra []string
	if g.pick(2) == 0 {
		extra = append(extra, fmt.Sprintf(`"failureThreshold":%d`, 1+g.pick(5)))
	}
	if g.pick(2) == 0 {
		extra = append(extra, fmt.Sprintf(`"cooldownMs":%d`, g.pick(120_000)))
	}
	if g.pick(3) == 0 {
		base := 1 + g.pick(2000)
		extra = append(extra, fmt.Sprintf(`"backoffBaseMs":%d`, base), fmt.Sprintf(`"backoffMaxMs":%d`, base+g.pick(60_000)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, fmt.Sprintf(`"maxFailovers":%d`, g.pick(6)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, fmt.Sprintf(`"providerThreshold":%d`, g.pick(3)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, fmt.Sprintf(`"giveUpAfterMs":%d`, g.pick(300_000)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, fmt.Sprintf(`"retryBudgetFloor":%d`, g.pick(8)), fmt.Sprintf(`"retryBudgetPercent":%d`, g.pick(50)))
	}
	if g.pick(4) == 0 {
		extra = append(extra, `"recovery":"stay"`)
	}
	if g.pick(4) == 0 {
		extra = append(extra, `"probes":false`)
	}
	if g.pick(4) == 0 {
		extra = append(extra, `"classes":[{"code":"CONTEXT_WINDOW_EXCEEDED","class":"model-unavailable"}]`)
	}
	if g.pick(4) == 0 {
		extra = append(extra, fmt.Sprintf(`"contextReservePercent":%d`, g.pick(91)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, `"retryUnknown":false`, fmt.Sprintf(`"unknownMaxRetries":%d`, g.pick(3)))
	}
	if g.pick(2) == 0 {
		extra = append(extra, fmt.Sprintf(`"tools":{"retry":["fetch","db_*"],"maxAttempts":%d}`, 1+g.pick(4)))
	}
	if g.pick(3) == 0 {
		extra = append(extra, fmt.Sprintf(`"stall":{"firstChunkMs":%d,"idleMs":%d,"purposes":{"compaction":{"idleMs":%d}}}`,
			g.pick(5)*1000, g.pick(5)*1000, 100+g.pick(5000)))
	}
	// The slow-call breaker on in every config, with no draw of its own, so
	// the rest of the stream stays as it was (its samples ride on stream-check).
	extra = append(extra, `"slow":{"firstTokenMs":3000,"minCalls":1}`)
	g.quota = g.pick(2) == 0
	if g.quota {
		// Two pools sharing one route (so inference is sometimes ambiguous), and a balance script.
		var main, other []string
		for _, i := range g.r.Perm(len(genChannels))[:2+g.pick(3)] {
			main = append(main, genChannels[i].json())
		}
		other = append(other, genChannels[g.pick(len(genChannels))].json())
		extra = append(extra, fmt.Sprintf(`"pools":[{"name":"main","routes":[%s]},{"name":"other","routes":[%s]}]`,
			strings.Join(main, ","), strings.Join(other, ",")))
		extra = append(extra, fmt.Sprintf(`"quota":{"longTermDelayMs":%d,"exhaustedCooldownMs":%d,"failOpen":%v,"defaultEnabled":%v,`+
			`"balances":[{"provider":%s,"script":["b"],"timeoutMs":500,"refreshMs":%d,"minimumRemaining":%d}]}`,
			100+g.pick(5000), 100+g.pick(120_000), g.pick(3) > 0, g.pick(3) > 0, js(g.channel().provider), 1000+g.pick(20_000), g.pick(10)))
	}
	row := configJSON(g.chain, extra...)
	if len(g.chain) > 0 && g.pick(2) == 0 {
		// A chain entry with its own breaker settings (fit_test.go).
		c := g.chain[g.pick(len(g.chain))].json()
		own := fmt.Sprintf(`,"failureThreshold":%d,"cooldownMs":%d,"slowFirstTokenMs":%d}`, 1+g.pick(4), 1+g.pick(60_000), 1+g.pick(30_000))
		row = strings.Replace(row, c, c[:len(c)-1]+own, 1)
	}
	return row
}

// contextTokens is a request's measured context: mostly known, across the
// generated windows (genWindows), sometimes unknown.
func (g *eventGen) contextTokens() string {
	if g.pick(4) == 0 {
		return ""
	}
	return fmt.Sprintf(`,"contextTokens":%d`, g.pick(1_200_000))
}

// genWindows are the windows model-info declares: mixed, so requests of
// growing context skip some targets; 0 declares none.
var genWindows = []int{0, 64_000, 128_000, 200_000, 1_000_000}

func (g *eventGen) failure() string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"code":%s`, js(genCodes[g.pick(len(genCodes))]))
	switch g.pick(4) {
	case 0:
	case 1:
		b.WriteString(`,"message":null`)
	default:
		fmt.Fprintf(&b, `,"message":%s`, js(genMessages[g.pick(len(genMessages))]))
	}
	if s := genStatuses[g.pick(len(genStatuses))]; s != 0 {
		fmt.Fprintf(&b, `,"status":%d`, s)
	}
	switch g.pick(12) {
	case 0, 1:
		fmt.Fprintf(&b, `,"providerRetryAfterMs":%d`, g.pick(100_000))
	case 2: // beyond the week every stated wait is capped at
		fmt.Fprintf(&b, `,"providerRetryAfterMs":%d`, g.r.Int63n(1<<53))
	}
	b.WriteString("}")
	return b.String()
}

func (g *eventGen) hostRetry() string {
	switch g.pick(3) {
	case 0:
		return ""
	case 1:
		return `,"hostRetry":null`
	}
	var codes []string
	for _, c := range []string{"RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT", "QUOTA"} {
		if g.pick(2) == 0 {
			codes = append(codes, js(c))
		}
	}
	return fmt.Sprintf(`,"hostRetry":{"mode":%q,"maxRetries":%d,"retryableCodes":[%s]}`,
		genModes[g.pick(len(genModes))], g.pick(4), strings.Join(codes, ","))
}

// viewQuery is a `view-query`: a session the module may know, or now and
// then one it has not met (the shell's saved settings are then its word).
func (g *eventGen) viewQuery() []byte {
	agent := genAgents[g.pick(len(genAgents))]
	if g.pick(3) == 0 {
		agent = fmt.Sprintf(`"unmet-%d"`, g.pick(1000))
	}
	var extra string
	for _, k := range []string{"proposed", "home", "pick"} {
		if g.pick(3) == 0 {
			extra += `,"` + k + `":` + g.channel().json()
		}
	}
	if g.pick(3) == 0 {
		extra += `,"quota":"` + []string{"on", "off", "default"}[g.pick(3)] + `"`
	}
	switch g.pick(4) {
	case 0:
		extra += `,"poolMode":"pool","pool":"` + []string{"main", "other", "nope"}[g.pick(3)] + `"`
	case 1:
		extra += `,"poolMode":"` + []string{"off", "default"}[g.pick(2)] + `"`
	}
	for _, k := range []string{"quotaInherited", "poolInherited"} {
		if g.pick(3) == 0 {
			extra += `,"` + k + `":` + []string{"true", "false"}[g.pick(2)]
		}
	}
	return []byte(fmt.Sprintf(`{"nowMs":%d,"agent":%s%s}`, g.now, agent, extra))
}

// projectionState is a `projection-state` as the shim folds it: each field
// null, left out, or set (a pool the row may not name, a route no pool
// holds, a route pools hold).
func (g *eventGen) projectionState() []byte {
	var fields []string
	for _, f := range []struct {
		key  string
		vals []string
	}{
		{"quota", []string{`"on"`, `"off"`, `"default"`}},
		{"pool", []string{`"main"`, `"other"`, `"nope"`, `"off"`}},
		{"route", []string{g.channel().json(), g.channel().json()}},
	} {
		switch g.pick(4) {
		case 0: // left out
		case 1:
			fields = append(fields, `"`+f.key+`":null`)
		default:
			fields = append(fields, `"`+f.key+`":`+f.vals[g.pick(len(f.vals))])
		}
	}
	return []byte("{" + strings.Join(fields, ",") + "}")
}

// inherited now and then marks a set-quota or set-pool as a forked
// session's parent's setting (or says plainly it is not).
func (g *eventGen) inherited() string {
	switch g.pick(4) {
	case 0:
		return `,"inherited":true`
	case 1:
		return `,"inherited":false`
	}
	return ""
}

// settingsCard is the settings card's query: a generated row and a section
// tuning a few of its keys, some the module refuses (a zero threshold, a
// quota key the card does not hold), the chain reordered.
func (g *eventGen) settingsCard() []byte {
	chain, quota := g.chain, g.quota
	row := g.config() // a row of its own: the running one stays
	g.chain, g.quota = chain, quota
	var keys []string
	if g.pick(2) == 0 {
		keys = append(keys, fmt.Sprintf(`"failureThreshold":%d`, g.pick(5)))
	}
	if g.pick(2) == 0 {
		keys = append(keys, []string{`"persistent":true`, `"recovery":"stay"`, `"backoffMaxMs":null`}[g.pick(3)])
	}
	if g.pick(2) == 0 {
		var list []string
		for _, i := range g.r.Perm(len(genChannels))[:g.pick(4)] {
			list = append(list, genChannels[i].json())
		}
		keys = append(keys, `"chain":[`+strings.Join(list, ",")+`]`)
	}
	if g.pick(2) == 0 {
		keys = append(keys, []string{`"quota":{"defaultEnabled":false}`, `"quota":{}`, `"quota":{"failOpen":true}`, `"quota":"on"`}[g.pick(4)])
	}
	in, err := json.Marshal(map[string]string{"rowJson": row, "sectionJson": "{" + strings.Join(keys, ",") + "}"})
	if err != nil {
		panic(err)
	}
	return in
}

// oldMarks is an old quota-marks.json as fold-marks reads it: live, lapsed
// and lifted marks on the generated providers, now and then no JSON at all.
func (g *eventGen) oldMarks() []byte {
	text := "{not json"
	if g.folds.Intn(8) != 0 {
		var marks []string
		for range g.folds.Intn(4) {
			p := genChannels[g.folds.Intn(len(genChannels))].provider
			at := g.now - int64(g.folds.Intn(100_000))
			lifted := []string{"", fmt.Sprintf(`,"liftedAtMs":%d`, at+int64(g.folds.Intn(2_000))-1_000)}[g.folds.Intn(2)]
			marks = append(marks, fmt.Sprintf(`%q:{"markedAtMs":%d,"untilMs":%d%s}`, p, at, at+int64(g.folds.Intn(7_200_000)), lifted))
		}
		text = `{"marks":{` + strings.Join(marks, ",") + `}}`
	}
	in, err := json.Marshal(map[string]any{"nowMs": g.now, "text": text})
	if err != nil {
		panic(err)
	}
	return in
}

// next returns the next call; valid is false for documents that are
// deliberately not valid inputs of the export's WIT type.
func (g *eventGen) next() (export string, input []byte, valid bool) {
	if g.calls++; g.calls%400 == 0 {
		return "fold-marks", g.oldMarks(), true
	}
	if g.pick(200) == 0 {
		agent := ""
		if g.pick(2) == 0 {
			agent = `,"agent":` + genAgents[g.pick(len(genAgents))]
		}
		return "inspect", []byte(fmt.Sprintf(`{"nowMs":%d%s}`, g.now, agent)), true
	}
	if g.pick(300) == 0 {
		return "preferences", nil, true
	}
	if g.pick(200) == 0 {
		return "view", g.viewQuery(), true
	}
	if g.pick(150) == 0 {
		return "quota-menu", g.viewQuery(), true // the same query: the web chip's quota menu
	}
	if g.pick(150) == 0 {
		return "quota-projection", g.projectionState(), true
	}
	if g.pick(250) == 0 {
		return "settings-card", g.settingsCard(), true
	}
	if g.pick(150) == 0 {
		forget := []string{"", `"forget":true`, `"forget":false`}[g.pick(3)]
		_ = g.pick(100_000_000) // was the prune age, now the row's healthPruneMs: drawn still, so the stream after it stays as it was
		return "shared-writes", []byte(`{` + forget + `}`), true
	}
	if g.pick(150) == 0 && g.written != nil {
		return "shared-written", g.written, true
	}
	switch d := g.pick(1000); {
	case d < 3:
		return "configure", []byte(g.config()), true
	case d < 13:
		return "snapshot", nil, true
	case d < 16 && len(g.snapshots) > 0:
		snap := string(g.snapshots[g.pick(len(g.snapshots))])
		if g.pick(3) == 0 { // records of the shared store: read, or published (live)
			snap = `{"fromShared":true` + []string{"", `,"live":true`}[g.pick(2)] + "," + strings.TrimPrefix(snap, "{")
		}
		return "restore", []byte(restoreAt(g.now, snap)), true
	case d < 30:
		// A malformed or invalid copy of a valid event.
		_, in, _ := g.event()
		switch g.pick(4) {
		case 0:
			in = in[:g.pick(len(in))]
		case 1:
			in = bytes.Replace(in, []byte(`"nowMs":`), []byte(`"nowMs":-`), 1)
		case 2:
			in = bytes.Replace(in, []byte(`"event":{`), []byte(`"event":{"bogus":1,`), 1)
		default:
			in = bytes.Replace(in, []byte(`"agent":`), []byte(`"agent":7,"x":`), 1)
		}
		return "decide", in, false
	}
	return g.event()
}

func (g *eventGen) event() (string, []byte, bool) {
	switch s := g.pick(20); {
	case s < 3:
		g.now += int64(g.pick(200))
	case s < 4:
		g.now += int64(30_000 + g.pick(90_000)) // past a cooldown
	default:
		g.now += int64(g.pick(3000))
	}
	agent := genAgents[g.pick(len(genAgents))]
	if g.pick(8) == 0 {
		// Many short-lived agents: more than the agent table keeps idle, so
		// its evictions run on both sides too.
		agent = fmt.Sprintf(`"n-%d"`, g.pick(3000))
	}
	var ev string
	if g.quota && g.pick(12) == 0 {
		switch g.pick(5) {
		case 4:
			// A session's persisted home (and now and then a pick) handed back.
			ev = fmt.Sprintf(`{"kind":"restore-route","agent":%s,"home":%s`, agent, g.channel().json())
			if g.pick(3) == 0 {
				ev += `,"pick":` + g.channel().json()
			}
			ev += "}"
		case 3:
			// A provider's exhaustion mark another host wrote, in its health record.
			rec := fmt.Sprintf(`{"channel":{"provider":%s,"model":"*"},"state":"open","failures":0,"opens":1,"openUntilMs":%d,"lastCode":"HTTP_402","changedAtMs":%d,"version":%d,"markedAtMs":%d}`,
				js(g.channel().provider), g.now+int64(g.pick(20_000))-2000, g.now-int64(g.pick(5000)), g.pick(6), g.now-int64(g.pick(5000)))
			return "restore", []byte(restoreAt(g.now, `{"channels":[`+rec+`]}`)), true
		case 0:
			ev = fmt.Sprintf(`{"kind":"set-quota","agent":%s,"mode":%q%s}`, agent, []string{"on", "off", "default"}[g.pick(3)], g.inherited())
		case 1:
			switch m := []string{"pool", "off", "default"}[g.pick(3)]; m {
			case "pool":
				ev = fmt.Sprintf(`{"kind":"set-pool","agent":%s,"mode":"pool","pool":%q%s}`, agent, []string{"main", "other", "nope"}[g.pick(3)], g.inherited())
			default:
				ev = fmt.Sprintf(`{"kind":"set-pool","agent":%s,"mode":%q%s}`, agent, m, g.inherited())
			}
		default:
			ev = fmt.Sprintf(`{"kind":"balance-reading","provider":%s,"ok":%v,"remaining":%d.5}`, js(g.channel().provider), g.pick(4) > 0, g.pick(20)-2)
		}
		return "decide", []byte(fmt.Sprintf(`{"nowMs":%d,"event":%s}`, g.now, ev)), true
	}
	switch k := g.pick(100); {
	case k < 42:
		c := g.channel()
		if len(g.chain) > 0 && g.pick(3) > 0 {
			c = g.chain[0]
		}
		g.lastProv[agent] = c.provider
		effort := ""
		if g.pick(4) == 0 {
			effort = `,"reasoningEffort":"high"`
		}
		ev = fmt.Sprintf(`{"kind":"request","agent":%s,"proposed":%s%s%s}`, agent, c.json(), effort, g.contextTokens())
	case k < 82:
		prov, ok := g.lastProv[agent]
		if !ok || g.pick(5) == 0 {
			prov = g.channel().provider
		}
		phase := beforeHost
		if g.pick(2) == 0 {
			phase = afterHost
		}
		ev = fmt.Sprintf(`{"kind":"request-error","agent":%s,"provider":%s,"failure":%s,"phase":%q%s,"rand":%d}`,
			agent, js(prov), g.failure(), phase, g.hostRetry(), g.r.Int63n(1<<53))
	case k < 88:
		ev = fmt.Sprintf(`{"kind":"settled","agent":%s}`, agent)
	case k < 91:
		ev = `{"kind":"wake"}`
	case k < 93:
		if g.pick(2) == 0 {
			ev = fmt.Sprintf(`{"kind":"probe-result","channel":%s,"ok":true}`, g.channel().json())
		} else {
			ev = fmt.Sprintf(`{"kind":"probe-result","channel":%s,"ok":false,"failure":%s}`, g.channel().json(), g.failure())
		}
	case k >= 95 && k < 98 && g.pick(2) == 0:
		// A tool call's attempt: the declared names and others, transient and permanent failures.
		tool := []string{"fetch", "db_query", "db_", "read", "fetcher"}[g.pick(5)]
		failure := ""
		switch g.pick(4) {
		case 0:
		case 1:
			failure = `,"failure":{"message":"read ECONNRESET"}`
		case 2:
			failure = `,"failure":{"message":"请求过于频繁，请稍后再试","code":"E429"}`
		default:
			failure = `,"failure":{"message":"EACCES: permission denied, open 'timeout.log'"}`
		}
		ev = fmt.Sprintf(`{"kind":"tool-result","agent":%s,"call":"c%d","tool":%q,"attempt":%d%s,"rand":%d}`,
			agent, g.pick(50), tool, 1+g.pick(5), failure, g.r.Int63n(1<<53))
	case k >= 95 && k < 98:
		// A streaming call's silence, measured at now: before or after its first chunk.
		opened := g.now - int64(g.pick(10_000))
		chunks, last := g.pick(3), ""
		if chunks > 0 {
			last = fmt.Sprintf(`,"lastChunkMs":%d`, opened+int64(g.pick(int(g.now-opened)+1)))
		}
		purpose := []string{"", `,"purpose":"compaction"`, `,"purpose":"session-title"`}[g.pick(3)]
		if chunks == 1 { // the check at the first chunk carries its time (the slow-call breaker's sample)
			var at int64
			fmt.Sscanf(last, `,"lastChunkMs":%d`, &at)
			last += fmt.Sprintf(`,"firstTokenMs":%d`, at-opened)
		}
		ev = fmt.Sprintf(`{"kind":"stream-check","channel":%s%s,"openedMs":%d,"chunks":%d%s,"cancelled":%v}`,
			g.channel().json(), purpose, opened, chunks, last, g.pick(8) == 0)
	case k < 95 && g.pick(2) == 0 || k < 94:
		ev = fmt.Sprintf(`{"kind":"model-info","channel":%s,"known":%v,"efforts":["low","high"][:%d]}`, g.channel().json(), g.pick(3) > 0, 0)
		ev = strings.Replace(ev, `[:0]`, "", 1)
		if g.pick(2) == 0 {
			ev = strings.Replace(ev, `["low","high"]`, `[]`, 1)
		}
		if w := genWindows[g.pick(len(genWindows))]; w > 0 {
			ev = strings.TrimSuffix(ev, "}") + fmt.Sprintf(`,"contextWindow":%d}`, w)
		}
	case k < 95:
		if g.pick(3) == 0 {
			ev = `{"kind":"set-backup"}`
		} else {
			ev = fmt.Sprintf(`{"kind":"set-backup","channel":%s}`, g.channel().json())
		}
	default:
		ev = fmt.Sprintf(`{"kind":"disposed","agent":%s}`, agent)
		delete(g.lastProv, agent)
	}
	return "decide", []byte(fmt.Sprintf(`{"nowMs":%d,"event":%s}`, g.now, ev)), true
}

// lockstep feeds n generated calls to the wasm instance and to the native
// codec and requires identical answers; it returns the answer kinds seen.
func lockstep(t *testing.T, seed int64, n int, validate bool) map[string]int {
	in := newInstance(t)
	var native codec.Module
	g := newEventGen(seed)
	kinds := map[string]int{}
	for i := 0; i < n; i++ {
		var export string
		var input []byte
		valid := true
		if i == 1 {
			export, input = "configure", []byte(g.config())
		} else if i > 0 {
			export, input, valid = g.next()
		} else {
			export, input = "decide", []byte(request(g.now, "early", chA)) // before configure
		}
		if validate && valid {
			checkInput(t, step{export: export, in: string(input)})
		}
		w := wasmAnswer(t, in, export, input)
		nat := nativeAnswer(&native, export, input)
		requireSame(t, i, export, input, w, nat)
		if w.err != "" {
			kinds["error"]++
			kinds["error "+export]++
			if strings.Contains(w.err, "internal error") {
				t.Fatalf("call %d: %s %s: %s", i, export, input, w.err)
			}
			continue
		}
		if validate {
			checkOutput(t, export, w.out)
		}
		switch export {
		case "snapshot":
			// Keep the snapshot, and a copy without provider-only channels
			// (which Restore rejects: see the skipped scenario), so restores
			// both fail and succeed.
			for _, snap := range [][]byte{w.out, withoutProviderOnly(t, w.out)} {
				if len(g.snapshots) < 32 {
					g.snapshots = append(g.snapshots, snap)
				} else {
					g.snapshots[g.pick(32)] = snap
				}
			}
			kinds["snapshot"]++
			if bytes.Contains(w.out, []byte(`"shared":[`)) {
				kinds["snapshot shared"]++
			}
		case "shared-writes":
			// Its records come back as written, so the store's view grows
			// and the snapshots restored carry it.
			var o struct {
				Writes []struct{ Record json.RawMessage }
			}
			require.NoError(t, json.Unmarshal(w.out, &o))
			recs := make([]json.RawMessage, 0, len(o.Writes))
			for _, x := range o.Writes {
				recs = append(recs, x.Record)
			}
			written, err := json.Marshal(map[string]any{"records": recs})
			require.NoError(t, err)
			g.written = written
			kinds["shared-writes"]++
			if len(recs) > 0 {
				kinds["shared-writes some"]++
			}
		case "settings-card":
			// Both answers, or the stream tests half of it.
			var o struct{ Problem *string }
			require.NoError(t, json.Unmarshal(w.out, &o))
			kinds["settings-card"]++
			if o.Problem != nil {
				kinds["settings-card problem"]++
			}
		case "fold-marks":
			// Marks taken, and a file that does not parse, or it tests little.
			var o struct {
				Adopted int
				Problem *string
			}
			require.NoError(t, json.Unmarshal(w.out, &o))
			kinds["fold-marks"]++
			if o.Adopted > 0 {
				kinds["fold-marks some"]++
			}
			if o.Problem != nil {
				kinds["fold-marks problem"]++
			}
		case "quota-menu":
			// The menu of a row with quota rules, down to a source only a
			// parent's settings give, or the stream tests little of it.
			var o struct{ Active bool }
			require.NoError(t, json.Unmarshal(w.out, &o))
			kinds["quota-menu"]++
			if o.Active {
				kinds["quota-menu active"]++
			}
			if bytes.Contains(w.out, []byte(`"inherited"`)) {
				kinds["quota-menu inherited"]++
			}
		case "quota-projection":
			// A pool named, not only none: the stream's routes and stated
			// pools must reach the config's pools, or it tests little.
			kinds["quota-projection"]++
			if !bytes.Contains(w.out, []byte(`"pool":null`)) {
				kinds["quota-projection pool"]++
			}
		case "decide":
			var o struct {
				Verdict struct {
					Kind, Reason string
				}
				Effects []struct{ Kind string }
			}
			require.NoError(t, json.Unmarshal(w.out, &o))
			kinds["verdict "+o.Verdict.Kind+" "+o.Verdict.Reason]++
			for _, fx := range o.Effects {
				kinds["effect "+fx.Kind]++
			}
		default:
			kinds[export]++
		}
	}
	return kinds
}

func TestDifferentialRandomEvents(t *testing.T) {
	const n = 25_000
	kinds := lockstep(t, 20240601, n, true)
	t.Logf("%d calls in lockstep: %v", n, kinds)
	// The stream must reach every verdict and effect, or it tests little.
	for _, k := range []string{"verdict pass ", "verdict swap ", "verdict defer ", "verdict retry ", "verdict wait ",
		"verdict delegate not-recoverable", "verdict delegate no-routable-fallback", "verdict delegate budget-exhausted",
		"verdict delegate recovery-timeout", "verdict delegate unknown-channel", "verdict delegate unknown-retries-spent",
		"effect circuit", "effect failover", "effect retry", "effect give-up", "effect schedule-wake", "effect probe",
		"effect effort-dropped", "verdict watch ", "verdict cut ", "verdict tool-retry ", "verdict tool-return ",
		"effect stall", "effect tool-retry", "snapshot", "restore", "configure", "error",
		"effect quota-wait", "effect quota-routed", "effect quota-session", "effect refresh-balance", "effect schedule-refresh", "inspect", "view", "quota-menu", "quota-menu active", "quota-menu inherited", "quota-projection", "quota-projection pool", "preferences", "settings-card", "settings-card problem", "fold-marks", "fold-marks some", "fold-marks problem",
		"shared-writes", "shared-writes some", "shared-written", "snapshot shared",
		"effect spill", "effect wait-cut", "effect session-route", "effect returned", "effect slow"} {
		require.Positive(t, kinds[k], "the generated stream never produced %q", k)
	}
}

// A few more seeds, without the (slower) WIT validation.
func TestDifferentialRandomSeeds(t *testing.T) {
	if testing.Short() {
		t.Skip("short")
	}
	for seed := int64(1); seed <= 3; seed++ {
		lockstep(t, seed, 5_000, false)
	}
}

// The native side really is independent state: two modules do not share it.
func TestNativeModulesAreIndependent(t *testing.T) {
	var m1, m2 codec.Module
	_, err := m1.Configure([]byte(cfgAB))
	require.NoError(t, err)
	_, err = m2.Decide([]byte(request(1, "a", chA)))
	require.True(t, errors.Is(err, codec.ErrNotConfigured))
}

type healthDoc struct {
	Channels []struct {
		Channel struct {
			Provider string `json:"provider"`
			Model    string `json:"model"`
		} `json:"channel"`
		State       string `json:"state"`
		Failures    uint32 `json:"failures"`
		OpenUntilMs uint64 `json:"openUntilMs"`
		LastCode    string `json:"lastCode"`
	} `json:"channels"`
}

// withoutProviderOnly drops the channels without a model from a snapshot.
func withoutProviderOnly(t testing.TB, snap []byte) []byte {
	var h healthDoc
	require.NoError(t, json.Unmarshal(snap, &h))
	kept := h.Channels[:0]
	for _, c := range h.Channels {
		if c.Channel.Model != "" {
			kept = append(kept, c)
		}
	}
	h.Channels = kept
	out, err := json.Marshal(h)
	require.NoError(t, err)
	return out
}
