package testhost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Builders for the contract's JSON, so the scenario tables read like the
// events they are. Every document they build is checked against the WIT.

// ch is a channel.
type ch struct{ provider, model string }

var (
	chA     = ch{"mock", "mock-a"}
	chB     = ch{"mock", "mock-b"}
	chC     = ch{"alt", "alt-c"}
	noModel = func(provider string) ch { return ch{provider, ""} }
)

func js(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (c ch) json() string {
	return fmt.Sprintf(`{"provider":%s,"model":%s}`, js(c.provider), js(c.model))
}

func chain(chs ...ch) string {
	parts := make([]string, len(chs))
	for i, c := range chs {
		parts[i] = c.json()
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// configJSON is a config row; extra is appended verbatim (`"maxFailovers":1`).
func configJSON(chs []ch, extra ...string) string {
	return `{"chain":` + chain(chs...) + joinExtra(extra) + `}`
}

func joinExtra(extra []string) string {
	if len(extra) == 0 {
		return ""
	}
	return "," + strings.Join(extra, ",")
}

// resolved is configure's answer: the defaults (policy/config.go) with the
// given "key":value overrides, in the writer's order.
func resolved(chs []ch, overrides ...string) string {
	fields := [][2]string{
		{"failureThreshold", "3"}, {"burstWindowMs", "120000"}, {"cooldownMs", "60000"}, {"maxCooldownMs", "1800000"},
		{"providerThreshold", "2"}, {"backoffBaseMs", "1000"}, {"backoffMaxMs", "30000"}, {"maxFailovers", "4"},
		{"giveUpAfterMs", "900000"}, {"retryBudgetPercent", "20"}, {"retryBudgetFloor", "5"}, {"spillAfter", "2"}, {"maxClockSkewMs", "180000"},
		{"recovery", `"return"`}, {"probes", "true"}, {"classes", "[]"},
		{"stall", stallDefault},                  // stall_test.go
		{"slow", slowDefault},                    // slow_test.go
		{"tools", toolsDefault},                  // toolretry_test.go
		{"pools", "[]"}, {"quota", quotaDefault}, // quota_test.go
		{"probeMaxTokens", "8"}, {"providerCooldownMs", "0"}, {"stripReasoningEffort", "[]"}, {"persistent", "false"},
		{"contextReservePercent", "20"},                      // fit_test.go
		{"retryUnknown", "true"}, {"unknownMaxRetries", "3"}, // policy/unknowncap.go
		{"skill", "false"},            // plugin/codec/skill_test.go
		{"hedge", hedgeDefault},       // policy/hedge.go
		{"healthPruneMs", "86400000"}, // policy/persist.go
		{"notify", "[]"},              // policy/notifytarget.go
	}
	for _, o := range overrides {
		k, v, _ := strings.Cut(o, ":")
		k = strings.Trim(k, `"`)
		found := false
		for i := range fields {
			if fields[i][0] == k {
				fields[i][1], found = v, true
			}
		}
		if !found {
			panic("resolved: unknown key " + k)
		}
	}
	out := `{"config":{"chain":` + chain(chs...)
	hedging := false
	for _, f := range fields {
		out += fmt.Sprintf(`,%q:%s`, f[0], f[1])
		if f[0] == "hedge" {
			hedging = !strings.HasPrefix(f[1], `{"afterMs":0,"afterPercentile":0,`)
		}
	}
	return out + fmt.Sprintf(`},"hedging":%t}`, hedging)
}

// hedgeDefault is the resolved `hedge` object when the row sets none: off.
const hedgeDefault = `{"afterMs":0,"afterPercentile":0,"minMs":1000,"maxMs":30000,"budgetPercent":5,"budgetFloor":1}`

// classic turns off the engine features that add effects to every step
// (wakes for probes; the provider breaker, since mock-a and mock-b share a
// provider) and the spill (its own scenarios: spill_test.go), for scenarios
// about the basic decision path.
var classic = []string{`"providerThreshold":0`, `"probes":false`, `"spillAfter":0`}

func resolvedDefaults(chs ...ch) string { return resolved(chs, classic...) }

// Events.

func request(now int64, agent string, proposed ch) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"request","agent":%s,"proposed":%s}}`, now, js(agent), proposed.json())
}

func requestEffort(now int64, agent string, proposed ch, effort string) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"request","agent":%s,"proposed":%s,"reasoningEffort":%s}}`,
		now, js(agent), proposed.json(), js(effort))
}

// failure builds a failure record; message "" and status/retryAfter 0 are omitted.
func failure(code, message string, status int, retryAfterMs int64) string {
	s := `{"code":` + js(code)
	if message != "" {
		s += `,"message":` + js(message)
	}
	if status != 0 {
		s += fmt.Sprintf(`,"status":%d`, status)
	}
	if retryAfterMs != 0 {
		s += fmt.Sprintf(`,"providerRetryAfterMs":%d`, retryAfterMs)
	}
	return s + "}"
}

func code(c string) string { return failure(c, "", 0, 0) }

const (
	beforeHost = "before-host"
	afterHost  = "after-host"
)

// hostRetryNormal is a dsh-llm-retry policy that retries rate limits and server errors.
const hostRetryNormal = `{"mode":"normal","maxRetries":2,"retryableCodes":["RATE_LIMIT","SERVER","TIMEOUT"]}`

// requestErr builds agent/request-error; hostRetry "" is omitted.
func requestErr(now int64, agent, provider, phase, fail, hostRetry string, rand uint64) string {
	hr := ""
	if hostRetry != "" {
		hr = `,"hostRetry":` + hostRetry
	}
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"request-error","agent":%s,"provider":%s,"failure":%s,"phase":%q%s,"rand":%d}}`,
		now, js(agent), js(provider), fail, phase, hr, rand)
}

func settled(now int64, agent string) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"settled","agent":%s}}`, now, js(agent))
}

func disposed(now int64, agent string) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"disposed","agent":%s}}`, now, js(agent))
}

// Outputs.

const (
	vPass  = `{"kind":"pass"}`
	vRetry = `{"kind":"retry"}`
	vDefer = `{"kind":"defer"}`
)

func vSwap(c ch) string {
	return fmt.Sprintf(`{"kind":"swap","provider":%s,"model":%s}`, js(c.provider), js(c.model))
}
func vWait(d int64) string           { return fmt.Sprintf(`{"kind":"wait","delayMs":%d}`, d) }
func vHeld(d int64) string           { return fmt.Sprintf(`{"kind":"wait","delayMs":%d,"held":true}`, d) } // a long-term quota wait
func vDelegate(reason string) string { return fmt.Sprintf(`{"kind":"delegate","reason":%q}`, reason) }

func out(verdict string, effects ...string) string {
	return `{"verdict":` + verdict + `,"effects":[` + strings.Join(effects, ",") + `]}`
}

// fxCircuit is a circuit-change; class "" is omitted, openUntil is written when to is open.
func fxCircuit(c ch, from, to, cause, class string, openUntil int64) string {
	s := fmt.Sprintf(`{"kind":"circuit","channel":%s,"from":%q,"to":%q,"cause":%s`, c.json(), from, to, js(cause))
	if class != "" {
		s += fmt.Sprintf(`,"class":%q`, class)
	}
	if to == "open" {
		s += fmt.Sprintf(`,"openUntilMs":%d`, openUntil)
	}
	return s + "}"
}

// fxTripped is a provider breaker's opening (fxCircuit) naming the model that tripped it.
func fxTripped(circuit, model string) string {
	return circuit[:len(circuit)-1] + fmt.Sprintf(`,"trippedBy":%s}`, js(model))
}

// fxFailover is an agent's first failover since its last success; fxFailoverN the nth.
func fxFailover(agent string, from, to ch, code, class string) string {
	return fxFailoverN(agent, from, to, code, class, 1)
}

func fxFailoverN(agent string, from, to ch, code, class string, n int) string {
	if n == 0 { // a pool's own route change
		return fmt.Sprintf(`{"kind":"failover","agent":%s,"from":%s,"to":%s,"code":%s,"class":%q}`,
			js(agent), from.json(), to.json(), js(code), class)
	}
	return fmt.Sprintf(`{"kind":"failover","agent":%s,"from":%s,"to":%s,"code":%s,"class":%q,"failovers":%d}`,
		js(agent), from.json(), to.json(), js(code), class, n)
}

// fxGiveUpAfter is a give-up after n failovers since the last success.
func fxGiveUpAfter(agent string, c ch, reason, code string, n int) string {
	return fmt.Sprintf(`{"kind":"give-up","agent":%s,"channel":%s,"reason":%q,"code":%s,"failovers":%d}`, js(agent), c.json(), reason, js(code), n)
}

func fxRetry(agent string, c ch, attempt int, delay int64, code string) string {
	return fmt.Sprintf(`{"kind":"retry","agent":%s,"channel":%s,"attempt":%d,"delayMs":%d,"code":%s}`,
		js(agent), c.json(), attempt, delay, js(code))
}

// fxGiveUp is a give-up; tried lists the channels failed on (fxTried), none
// when the failure was not routed here.
func fxGiveUp(agent string, c ch, reason, code string, tried ...string) string {
	s := fmt.Sprintf(`{"kind":"give-up","agent":%s,"channel":%s,"reason":%q,"code":%s`, js(agent), c.json(), reason, js(code))
	if len(tried) > 0 {
		s += `,"tried":[` + strings.Join(tried, ",") + `]`
	}
	return s + "}"
}

// fxTried is one entry of a give-up's tried list.
func fxTried(c ch, code string) string {
	return fmt.Sprintf(`{"channel":%s,"code":%s}`, c.json(), js(code))
}

// health is a snapshot; each entry from hc.
func health(entries ...string) string { return `{"channels":[` + strings.Join(entries, ",") + `]}` }

func hc(c ch, state string, failures int, openUntil int64, lastCode string) string {
	return hcFull(c, state, failures, 0, openUntil, lastCode, 0)
}

func hcFull(c ch, state string, failures, opens int, openUntil int64, lastCode string, changedAt int64) string {
	return fmt.Sprintf(`{"channel":%s,"state":%q,"failures":%d,"opens":%d,"openUntilMs":%d,"lastCode":%s,"changedAtMs":%d}`,
		c.json(), state, failures, opens, openUntil, js(lastCode), changedAt)
}

// hcV is a record with its merge version (policy/merge.go).
func hcV(c ch, state string, failures, opens int, openUntil int64, lastCode string, changedAt int64, version int) string {
	return strings.TrimSuffix(hcFull(c, state, failures, opens, openUntil, lastCode, changedAt), "}") + fmt.Sprintf(`,"version":%d}`, version)
}

func restored(n, adopted int) string { return fmt.Sprintf(`{"channels":%d,"adopted":%d}`, n, adopted) }

// restoredSkipping is a restore's answer that skipped records for these reasons.
func restoredSkipping(n, adopted int, reasons ...string) string {
	list := make([]string, len(reasons))
	for i, r := range reasons {
		list[i] = js(r)
	}
	return fmt.Sprintf(`{"channels":%d,"adopted":%d,"skipped":%d,"skipReasons":[%s]}`, n, adopted, len(reasons), strings.Join(list, ","))
}

// ---- running steps

// step is one call of a scenario.
type step struct {
	export  string
	in      string
	want    string // the expected output, compared as JSON; "" to skip (with check or wantErr)
	wantErr string // a substring of the expected error
	// raw marks an input that is deliberately not a valid document of the
	// export's WIT parameter type: the validator must reject it too.
	raw   bool
	check func(t *testing.T, out []byte)
	on    int // which instance of the scenario (0 or 1)
	note  string
}

func configure(in, want string) step { return step{export: "configure", in: in, want: want} }
func decide(in, want string) step    { return step{export: "decide", in: in, want: want} }
func snapshot(want string) step      { return step{export: "snapshot", want: want} }
func restore(in, want string) step   { return step{export: "restore", in: restoreInput(in), want: want} }
func fails(export, in, err string) step {
	return step{export: export, in: restoreInput(in), wantErr: err}
}

// restoreInput makes a health document (a snapshot) a restore input at
// time 0, the tables' epoch, unless it names its time already.
func restoreInput(health string) string {
	if !strings.HasPrefix(health, `{"channels"`) {
		return health
	}
	return restoreAt(0, health)
}

// restoreAt makes a health document a restore input at time now.
func restoreAt(now int64, health string) string {
	return fmt.Sprintf(`{"nowMs":%d,`, now) + strings.TrimPrefix(health, "{")
}
func failsRaw(export, in, err string) step {
	return step{export: export, in: restoreInput(in), wantErr: err, raw: true}
}

// caller is the wasm instance, the native codec or the Extism SDK plugin.
type caller interface {
	Call(export string, input []byte) ([]byte, error)
}

// paramType is an export's WIT parameter type, nil when it takes none.
func paramType(t testing.TB, export string) *Type {
	f, ok := policyWorld(t).Export(export)
	require.True(t, ok, "no WIT export %q", export)
	if len(f.Params) == 0 {
		return nil
	}
	return f.Params[0].Type
}

// resultType is the ok type of an export's result<T, string>.
func resultType(t testing.TB, export string) *Type {
	f, ok := policyWorld(t).Export(export)
	require.True(t, ok, "no WIT export %q", export)
	return f.Result.Ok
}

// checkInput validates a step's input against its export's WIT parameter:
// valid inputs must pass, raw ones must not.
func checkInput(t testing.TB, s step) {
	t.Helper()
	pt := paramType(t, s.export)
	var err error
	if pt == nil {
		if s.in != "" {
			err = fmt.Errorf("%s takes no parameter, the input must be empty", s.export)
		}
	} else {
		err = contract.ValidateJSON(pt, []byte(s.in))
	}
	if s.raw {
		require.Error(t, err, "raw input of %s should not be a valid %v: %s", s.export, pt, s.in)
	} else {
		require.NoError(t, err, "input of %s", s.export)
	}
}

// checkOutput validates an output against its export's WIT result type.
func checkOutput(t testing.TB, export string, out []byte) {
	t.Helper()
	require.NoError(t, contract.ValidateJSON(resultType(t, export), out), "output of %s: %s", export, out)
}

// runStep makes one call and checks it.
func runStep(t *testing.T, i int, c caller, s step) []byte {
	t.Helper()
	checkInput(t, s)
	got, err := c.Call(s.export, []byte(s.in))
	where := fmt.Sprintf("step %d: %s %s %s", i, s.export, s.in, s.note)
	if s.wantErr != "" {
		require.Error(t, err, "%s: want an error, got %s", where, got)
		var pe *PluginError
		require.ErrorAs(t, err, &pe, where)
		require.True(t, strings.HasPrefix(pe.Message, s.export+": "), "%s: error %q should start with the export name", where, pe.Message)
		require.Contains(t, pe.Message, s.wantErr, where)
		return nil
	}
	require.NoError(t, err, where)
	checkOutput(t, s.export, got)
	if s.want != "" {
		require.JSONEq(t, s.want, string(withoutUnnamed(withoutAudits(t, withoutVersions(t, s, got), s.want), s.want, "session-route")), where)
	}
	if s.check != nil {
		s.check(t, got)
	}
	return got
}

// runSteps runs a scenario on fresh instances.
func runSteps(t *testing.T, steps []step) {
	t.Helper()
	var ins [2]*Instance
	for i, s := range steps {
		if ins[s.on] == nil {
			ins[s.on] = newInstance(t)
		}
		runStep(t, i, ins[s.on], s)
	}
}

// withoutVersions drops the records' merge versions from a snapshot whose
// expectation names none: most scenarios are about states and times, and
// spelling a counter in each would hide what they check. Scenarios about the
// merge order name versions and get them compared (clock_test.go). The
// burst's last failure time is dropped the same way unless named (the
// scenarios about the burst across processes name it: burst_test.go), and
// so is the cold-pass flag (TestColdPassScenarios names it).
func withoutVersions(t *testing.T, s step, got []byte) []byte {
	versions, lastFailures, cold := strings.Contains(s.want, `"version"`), strings.Contains(s.want, `"lastFailureMs"`), strings.Contains(s.want, `"coldPass"`)
	if s.export != "snapshot" || versions && lastFailures && cold {
		return got
	}
	var doc map[string]any
	require.NoError(t, json.Unmarshal(got, &doc))
	if !cold {
		delete(doc, "coldPass")
	}
	chs, _ := doc["channels"].([]any)
	for _, c := range chs {
		if m, ok := c.(map[string]any); ok {
			if !versions {
				delete(m, "version")
			}
			if !lastFailures {
				delete(m, "lastFailureMs")
			}
		}
	}
	out, err := json.Marshal(doc)
	require.NoError(t, err)
	return out
}

// fxFailoverHome is a failover away from a channel that is not the agent's home.
func fxFailoverHome(agent string, from, to ch, code, class string, home ch) string {
	f := fxFailover(agent, from, to, code, class)
	return f[:len(f)-1] + fmt.Sprintf(`,"home":%s}`, home.json())
}

// fxFailoverHomeN is the nth failover since the last success, with the home it keeps.
func fxFailoverHomeN(agent string, from, to ch, code, class string, home ch, n int) string {
	f := fxFailoverN(agent, from, to, code, class, n)
	return f[:len(f)-1] + fmt.Sprintf(`,"home":%s}`, home.json())
}

// fxGiveUpN is a give-up after n failovers since the last success, with the channels tried.
func fxGiveUpN(agent string, c ch, reason, code string, n int, tried ...string) string {
	g := fxGiveUp(agent, c, reason, code, tried...)
	return g[:len(g)-1] + fmt.Sprintf(`,"failovers":%d}`, n)
}

// fxReturned is an agent's request going back home.
func fxReturned(agent string, from, to ch) string {
	return fmt.Sprintf(`{"kind":"returned","agent":%s,"from":%s,"to":%s}`, js(agent), from.json(), to.json())
}

// fxPick is the user's pick (home and pick alike) reported for persistence.
func fxPick(agent string, c ch) string {
	return fmt.Sprintf(`{"kind":"session-route","agent":%s,"home":%s,"pick":%s}`, js(agent), c.json(), c.json())
}

// withoutAudits drops each effect's audit entry from a decide output whose
// expectation names none: the scenarios are about decisions, and the
// records are the codec's, checked kind by kind in plugin/codec/audit_test.go.
// Each dropped entry must still be a record: a JSON object with its type.
func withoutAudits(t *testing.T, got []byte, want string) []byte {
	t.Helper()
	if strings.Contains(want, `"audit"`) || !bytes.Contains(got, []byte(`"audit"`)) {
		return got
	}
	var o map[string]json.RawMessage
	var fx []map[string]json.RawMessage
	if json.Unmarshal(got, &o) != nil || json.Unmarshal(o["effects"], &fx) != nil {
		return got
	}
	for _, e := range fx {
		if a, ok := e["audit"]; ok {
			var entry struct{ Record struct{ Type string } }
			require.NoError(t, json.Unmarshal(a, &entry), "audit %s", a)
			require.NotEmpty(t, entry.Record.Type, "audit %s: its record has no type", a)
			delete(e, "audit")
		}
	}
	o["effects"], _ = json.Marshal(fx)
	out, _ := json.Marshal(o)
	return out
}

// withoutUnnamed drops the effects of kind from a decide output unless want
// names that kind. session-route is the shell's persistence news (a session
// routed away from its home, a user's pick): the session scenarios name it
// and check it exactly; the engine scenarios, written before it, check the
// engine's own effects. The WIT check above still sees every effect.
func withoutUnnamed(got []byte, want, kind string) []byte {
	if strings.Contains(want, `"`+kind+`"`) || !bytes.Contains(got, []byte(`"`+kind+`"`)) {
		return got
	}
	var o map[string]json.RawMessage
	var fx []json.RawMessage
	if json.Unmarshal(got, &o) != nil || json.Unmarshal(o["effects"], &fx) != nil {
		return got
	}
	kept := fx[:0]
	for _, e := range fx {
		var k struct{ Kind string }
		if json.Unmarshal(e, &k) == nil && k.Kind == kind {
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == 0 {
		o["effects"] = json.RawMessage("[]")
	} else {
		o["effects"], _ = json.Marshal(kept)
	}
	out, _ := json.Marshal(o)
	return out
}
