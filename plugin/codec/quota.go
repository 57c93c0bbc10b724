package codec

import (
	"fmt"
	"math"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

// The quota rules on the wire: the row's `pools` and `quota`, the per-session
// and balance events, the quota effects and the `inspect` report.

var (
	poolKeys    = []string{"name", "routes"}
	routeKeys   = []string{"provider", "model", "reasoningEffort", "failureThreshold", "cooldownMs", "slowFirstTokenMs"}
	quotaKeys   = []string{"active", "longTermDelayMs", "defaultEnabled", "balances", "failOpen", "exhaustedCooldownMs"}
	balanceKeys = []string{"provider", "script", "timeoutMs", "refreshMs", "apiKeyEnv", "env", "minimumRemaining", "unit"}
)

// pools reads the row's `pools` list.
func (d *decoder) pools(v gjson.Result, ts *targets) []policy.Pool {
	var out []policy.Pool
	for i, p := range d.array(v, "pools", false) {
		path := "pools[" + strconv.Itoa(i) + "]"
		if !d.object(p, path, poolKeys...) {
			break
		}
		pool := policy.Pool{Name: d.str(p.Get("name"), path+".name", true)}
		for j, r := range d.array(p.Get("routes"), path+".routes", true) {
			rp := fmt.Sprintf("%s.routes[%d]", path, j)
			route := d.route(r, rp)
			if r.IsObject() {
				d.note(ts, route.Channel, d.settings(r, rp), rp)
			}
			pool.Routes = append(pool.Routes, route)
		}
		out = append(out, pool)
	}
	return out
}

func (d *decoder) route(v gjson.Result, path string) policy.Route {
	if !d.object(v, path, routeKeys...) {
		return policy.Route{}
	}
	return policy.Route{
		Channel:         policy.Channel{Provider: d.str(v.Get("provider"), path+".provider", true), Model: d.str(v.Get("model"), path+".model", true)},
		ReasoningEffort: d.str(v.Get("reasoningEffort"), path+".reasoningEffort", false),
	}
}

// quota reads the row's `quota` object over cfg, which holds the defaults.
func (d *decoder) quota(v gjson.Result, cfg *policy.QuotaConfig) {
	if !present(v) || !d.object(v, "quota", quotaKeys...) {
		return
	}
	if n, ok := d.uint(v.Get("longTermDelayMs"), "quota.longTermDelayMs", false, maxMs); ok {
		cfg.LongTermDelayMs = int64(n)
	}
	if n, ok := d.uint(v.Get("exhaustedCooldownMs"), "quota.exhaustedCooldownMs", false, maxMs); ok {
		cfg.ExhaustedCooldownMs = int64(n)
	}
	if present(v.Get("defaultEnabled")) {
		cfg.DefaultEnabled = d.boolean(v.Get("defaultEnabled"), "quota.defaultEnabled")
	}
	if present(v.Get("failOpen")) {
		cfg.FailOpen = d.boolean(v.Get("failOpen"), "quota.failOpen")
	}
	for i, b := range d.array(v.Get("balances"), "quota.balances", false) {
		path := "quota.balances[" + strconv.Itoa(i) + "]"
		if !d.object(b, path, balanceKeys...) {
			break
		}
		bal := policy.Balance{TimeoutMs: policy.DefaultBalanceTimeoutMs, RefreshMs: policy.DefaultBalanceRefreshMs,
			Provider:  d.str(b.Get("provider"), path+".provider", true),
			APIKeyEnv: d.str(b.Get("apiKeyEnv"), path+".apiKeyEnv", false),
			Unit:      d.str(b.Get("unit"), path+".unit", false)}
		for j, a := range d.array(b.Get("script"), path+".script", true) {
			bal.Script = append(bal.Script, d.str(a, fmt.Sprintf("%s.script[%d]", path, j), true))
		}
		if n, ok := d.uint(b.Get("timeoutMs"), path+".timeoutMs", false, maxMs); ok {
			bal.TimeoutMs = int64(n)
		}
		if n, ok := d.uint(b.Get("refreshMs"), path+".refreshMs", false, maxMs); ok {
			bal.RefreshMs = int64(n)
		}
		if f, ok := d.number(b.Get("minimumRemaining"), path+".minimumRemaining", false); ok {
			bal.MinimumRemaining = f
		}
		for j, e := range d.array(b.Get("env"), path+".env", false) {
			ep := fmt.Sprintf("%s.env[%d]", path, j)
			if !d.object(e, ep, "name", "value") {
				break
			}
			bal.Env = append(bal.Env, policy.EnvVar{Name: d.str(e.Get("name"), ep+".name", true), Value: d.str(e.Get("value"), ep+".value", true)})
		}
		cfg.Balances = append(cfg.Balances, bal)
	}
}

// number reads a finite JSON number.
func (d *decoder) number(v gjson.Result, path string, required bool) (float64, bool) {
	if !present(v) {
		if required {
			d.fail(path, "is required")
		}
		return 0, false
	}
	if v.Type != gjson.Number || math.IsInf(v.Num, 0) || math.IsNaN(v.Num) {
		d.fail(path, "must be a number")
		return 0, false
	}
	return v.Num, true
}

// writeRouted writes a quota move's members: the effect and its audit
// record (plugin/codec/audit.go) say the same after their kind or type.
func writeRouted(w *writer, e policy.QuotaRouted) {
	w.str("agent", e.Agent)
	w.str("pool", e.Pool)
	if !e.From.Channel.IsZero() {
		writeRoute(w, "from", e.From)
	}
	writeRoute(w, "to", e.To)
	w.str("cause", e.Cause)
}

func writeRoute(w *writer, k memberKey, r policy.Route) {
	w.beginObject(k)
	w.str("provider", r.Channel.Provider)
	w.str("model", r.Channel.Model)
	if r.ReasoningEffort != "" {
		w.str("reasoningEffort", r.ReasoningEffort)
	}
	w.endObject()
}

// writeConfigRoute is writeRoute with the route's own settings (targets.go).
func writeConfigRoute(w *writer, r policy.Route, t policy.TargetSettings) {
	w.beginObject("")
	w.str("provider", r.Channel.Provider)
	w.str("model", r.Channel.Model)
	if r.ReasoningEffort != "" {
		w.str("reasoningEffort", r.ReasoningEffort)
	}
	writeSettings(w, t)
	w.endObject()
}

// num writes a float the way JavaScript prints it (shortest round-trip).
func (w *writer) num(k memberKey, f float64) {
	w.key(k)
	w.b = strconv.AppendFloat(w.b, f, 'g', -1, 64)
}

// writeQuotaConfig writes the resolved `pools` and `quota`.
func writeQuotaConfig(w *writer, c policy.Config) {
	w.beginArray("pools")
	for _, p := range c.Pools {
		w.beginObject("")
		w.str("name", p.Name)
		w.beginArray("routes")
		for _, r := range p.Routes {
			writeConfigRoute(w, r, c.Targets[r.Channel])
		}
		w.endArray()
		w.endObject()
	}
	w.endArray()
	q := c.Quota
	w.beginObject("quota")
	w.boolean("active", c.QuotaActive())
	w.int("longTermDelayMs", q.LongTermDelayMs)
	w.boolean("defaultEnabled", q.DefaultEnabled)
	w.boolean("failOpen", q.FailOpen)
	w.int("exhaustedCooldownMs", q.ExhaustedCooldownMs)
	w.beginArray("balances")
	for _, b := range q.Balances {
		w.beginObject("")
		w.str("provider", b.Provider)
		w.strings("script", b.Script)
		w.int("timeoutMs", b.TimeoutMs)
		w.int("refreshMs", b.RefreshMs)
		if b.APIKeyEnv != "" {
			w.str("apiKeyEnv", b.APIKeyEnv)
		}
		w.beginArray("env")
		for _, e := range b.Env {
			w.beginObject("")
			w.str("name", e.Name)
			w.str("value", e.Value)
			w.endObject()
		}
		w.endArray()
		w.num("minimumRemaining", b.MinimumRemaining)
		w.str("unit", b.Unit)
		w.endObject()
	}
	w.endArray()
	w.endObject()
}

// quotaEvent reads the quota events: set-quota, set-pool, balance-reading.
func (d *decoder) quotaEvent(kind string, e gjson.Result) policy.Event {
	switch kind {
	case "set-quota":
		d.object(e, "event", "kind", "agent", "mode", "inherited")
		return policy.SetQuota{
			Agent:     d.str(e.Get("agent"), "event.agent", true),
			Mode:      policy.SwitchMode(d.oneOf(e.Get("mode"), "event.mode", true, "on", "off", "default")),
			Inherited: d.boolean(e.Get("inherited"), "event.inherited"),
		}
	case "set-pool":
		d.object(e, "event", "kind", "agent", "mode", "pool", "inherited")
		ev := policy.SetPool{
			Agent:     d.str(e.Get("agent"), "event.agent", true),
			Mode:      policy.PoolMode(d.oneOf(e.Get("mode"), "event.mode", true, "pool", "off", "default")),
			Pool:      d.str(e.Get("pool"), "event.pool", false),
			Inherited: d.boolean(e.Get("inherited"), "event.inherited"),
		}
		if ev.Mode == policy.PoolNamed && ev.Pool == "" {
			d.fail("event.pool", "is required with mode pool")
		}
		return ev
	default: // balance-reading
		d.object(e, "event", "kind", "provider", "ok", "remaining", "resetsAtMs")
		ev := policy.BalanceReading{Provider: d.str(e.Get("provider"), "event.provider", true), OK: d.boolean(e.Get("ok"), "event.ok")}
		if ev.OK {
			ev.Remaining, _ = d.number(e.Get("remaining"), "event.remaining", true)
		}
		at, _ := d.uint(e.Get("resetsAtMs"), "event.resetsAtMs", false, maxMs)
		ev.ResetsAtMs = int64(at)
		return ev
	}
}

// writeQuotaEffect writes the quota effects; false when fx is not one.
func writeQuotaEffect(w *writer, fx policy.Effect) bool {
	switch e := fx.(type) {
	case policy.QuotaWait:
		w.str("kind", "quota-wait")
		writeWait(w, e)
	case policy.QuotaRouted:
		w.str("kind", "quota-routed")
		writeRouted(w, e)
	case policy.QuotaSession:
		w.str("kind", "quota-session")
		writeSession(w, e)
	case policy.RefreshBalance:
		w.str("kind", "refresh-balance")
		w.str("provider", e.Provider)
	case policy.ScheduleRefresh:
		w.str("kind", "schedule-refresh")
		w.int("atMs", e.AtMs)
	default:
		return false
	}
	return true
}

func writeWait(w *writer, e policy.QuotaWait) {
	w.str("agent", e.Agent)
	w.str("phase", string(e.Phase))
	if e.Reason != "" {
		w.str("reason", string(e.Reason))
	}
	w.str("provider", e.Provider)
	if e.Pool != "" {
		w.str("pool", e.Pool)
	}
	w.int("enteredAtMs", e.EnteredAtMs)
	w.int("attempts", int64(e.Attempts))
	w.int("nextAttemptAtMs", e.NextAttemptAtMs)
}

func writeSession(w *writer, e policy.QuotaSession) {
	w.str("agent", e.Agent)
	w.boolean("enabled", e.Enabled)
	w.str("enabledSource", string(e.EnabledSource))
	if e.Pool != "" {
		w.str("pool", e.Pool)
	}
	w.str("poolSource", string(e.PoolSource))
	if !e.Route.Channel.IsZero() {
		writeRoute(w, "route", e.Route)
	}
}

// Inspect answers the `inspect` export: the quota report at nowMs.
func (m *Module) Inspect(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "input")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "nowMs", "agent")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	agent := d.str(v.Get("agent"), "agent", false)
	if d.err != nil {
		return nil, d.err
	}
	r := m.state.QuotaReport(int64(now), agent)
	var w writer
	w.beginObject("")
	w.boolean("active", r.Active)
	w.boolean("defaultEnabled", r.DefaultEnabled)
	w.beginArray("pools")
	for _, p := range r.Pools {
		w.beginObject("")
		w.str("name", p.Name)
		writeRoute(&w, "choice", p.Choice)
		w.boolean("usable", p.Usable)
		w.beginArray("routes")
		for _, rr := range p.Routes {
			w.beginObject("")
			writeRoute(&w, "route", rr.Route)
			w.boolean("usable", rr.Usable)
			w.str("why", string(rr.Why))
			w.endObject()
		}
		w.endArray()
		w.endObject()
	}
	w.endArray()
	w.beginArray("providers")
	for _, p := range r.Providers {
		w.beginObject("")
		w.str("provider", p.Provider)
		if p.MarkedUntilMs != 0 {
			w.int("markedAtMs", p.MarkedAtMs)
			w.int("markedUntilMs", p.MarkedUntilMs)
		}
		w.boolean("hasBalance", p.HasBalance)
		if p.HasBalance {
			w.str("unit", p.Unit)
			w.num("minimumRemaining", p.MinimumRemaining)
			w.int("refreshMs", p.RefreshMs)
			w.boolean("stale", p.Stale)
			w.boolean("refreshing", p.Refreshing)
		}
		if rd := p.Reading; rd != nil {
			w.beginObject("reading")
			w.int("atMs", rd.AtMs)
			w.boolean("ok", rd.OK)
			if rd.OK {
				w.num("remaining", rd.Remaining)
			}
			if rd.ResetsAtMs != 0 {
				w.int("resetsAtMs", rd.ResetsAtMs)
			}
			w.endObject()
		}
		w.endObject()
	}
	w.endArray()
	if s := r.Session; s != nil {
		w.beginObject("session")
		writeSession(&w, s.QuotaSession)
		if s.Wait != nil {
			w.beginObject("wait")
			writeWait(&w, *s.Wait)
			w.endObject()
		}
		w.endObject()
	}
	w.endObject()
	return w.b, nil
}
