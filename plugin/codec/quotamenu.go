package codec

func init() { register("quota-menu", (*Module).QuotaMenu) }

// QuotaMenu answers the web chip's quota menu of one session
// (policy/quotamenu.go), on the session view's query. Changes nothing.
func (m *Module) QuotaMenu(input []byte) ([]byte, error) {
	now, q, err := m.viewQuery(input)
	if err != nil {
		return nil, err
	}
	menu := m.state.QuotaMenu(now, q)
	var w writer
	w.beginObject("")
	w.boolean("active", menu.Active)
	w.boolean("defaultEnabled", menu.DefaultEnabled)
	w.strings("pools", menu.Pools)
	w.boolean("enabled", menu.Enabled)
	w.str("source", string(menu.Source))
	if menu.Pool != "" {
		w.str("pool", menu.Pool)
	}
	w.str("poolSource", string(menu.PoolSource))
	w.endObject()
	return w.b, nil
}
