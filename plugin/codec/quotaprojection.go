package codec

import "github.com/dsh-resilience/dsh-resilience/policy"

func init() { register("quota-projection", (*Module).QuotaProjection) }

// QuotaProjection answers the quotaRetry session projection of a folded
// session (policy/quotaprojection.go). Changes nothing. Its route is taken
// as folded, blank parts and all: it only ever matches a pool's route, so
// a route no config could name is no error, just no pool.
func (m *Module) QuotaProjection(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "input")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "quota", "pool", "route")
	var st policy.ProjectionState
	if c := v.Get("quota"); present(c) {
		st.Quota = policy.SwitchMode(d.oneOf(c, "input.quota", true, "on", "off", "default"))
	}
	switch pool := d.str(v.Get("pool"), "input.pool", false); pool {
	case "":
	case string(policy.PoolOff):
		st.PoolMode = policy.PoolOff
	default:
		st.PoolMode, st.Pool = policy.PoolNamed, pool
	}
	if c := v.Get("route"); present(c) {
		st.Route = d.channel(c, "input.route")
	}
	if d.err != nil {
		return nil, d.err
	}
	p := m.state.QuotaProjection(st)
	var w writer
	w.beginObject("")
	w.boolean("enabled", p.Enabled)
	w.boolean("defaultEnabled", p.DefaultEnabled)
	w.str("source", string(p.Source))
	if p.Pool != "" {
		w.str("pool", p.Pool)
	} else {
		w.null("pool")
	}
	w.str("poolSource", string(p.PoolSource))
	w.strings("pools", p.Pools)
	w.endObject()
	return w.b, nil
}
