package codec

import "github.com/dsh-resilience/dsh-resilience/policy"

func init() { register("view", (*Module).View) }

// View answers the session view (policy/view.go): what the web chip shows
// of one session. Changes nothing.
func (m *Module) View(input []byte) ([]byte, error) {
	now, q, err := m.viewQuery(input)
	if err != nil {
		return nil, err
	}
	sv := m.state.View(now, q)
	var w writer
	w.beginObject("")
	optChannel(&w, "current", sv.Current)
	optChannel(&w, "home", sv.Home)
	if !sv.Next.IsZero() {
		w.beginObject("next")
		writeChannel(&w, "channel", sv.Next)
		w.str("via", string(sv.Via))
		w.endObject()
	}
	w.boolean("avoided", sv.Avoided)
	if g := sv.GaveUp; g != nil {
		w.beginObject("giveUp")
		writeChannel(&w, "channel", g.Channel)
		w.str("reason", string(g.Reason))
		w.str("code", g.Code)
		if g.Failovers > 0 {
			w.int("failovers", int64(g.Failovers))
		}
		writeTried(&w, g.Tried)
		w.endObject()
	}
	w.endObject()
	return w.b, nil
}

// viewQuery reads the WIT record `view-query`, which the session view and
// the quota menu (quotamenu.go) both answer.
func (m *Module) viewQuery(input []byte) (int64, policy.ViewQuery, error) {
	v, d, err := m.configuredInput(input, "input")
	if err != nil {
		return 0, policy.ViewQuery{}, err
	}
	d.object(v, "", "nowMs", "agent", "proposed", "home", "pick", "quota", "poolMode", "pool", "quotaInherited", "poolInherited")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	q := policy.ViewQuery{Agent: d.str(v.Get("agent"), "agent", true)}
	for _, f := range []struct {
		key string
		to  *policy.Channel
	}{{"proposed", &q.Proposed}, {"home", &q.Home}, {"pick", &q.Pick}} {
		if c := v.Get(f.key); present(c) {
			*f.to = d.channel(c, "input."+f.key)
			d.named(*f.to, "input."+f.key)
		}
	}
	if c := v.Get("quota"); present(c) {
		q.Quota = policy.SwitchMode(d.oneOf(c, "input.quota", true, "on", "off", "default"))
	}
	if c := v.Get("poolMode"); present(c) {
		q.PoolMode = policy.PoolMode(d.oneOf(c, "input.poolMode", true, "pool", "off", "default"))
	}
	q.Pool = d.str(v.Get("pool"), "input.pool", false)
	if q.PoolMode == policy.PoolNamed && q.Pool == "" {
		d.fail("input.pool", "is required with poolMode pool")
	}
	q.QuotaInherited = d.boolean(v.Get("quotaInherited"), "input.quotaInherited")
	q.PoolInherited = d.boolean(v.Get("poolInherited"), "input.poolInherited")
	return int64(now), q, d.err
}

// optChannel writes ch under k, or nothing for the zero channel (an absent option).
func optChannel(w *writer, k memberKey, ch policy.Channel) {
	if !ch.IsZero() {
		writeChannel(w, k, ch)
	}
}
