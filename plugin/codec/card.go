package codec

import "github.com/dsh-resilience/dsh-resilience/policy"

func init() { register("settings-card", (*Module).SettingsCard) }

// SettingsCard answers the web settings card's section read against the
// row (policy/card.go): the config it makes, the check's word on it, and
// the keys it would change of the running config. Row and section are
// free-form JSON, so they come as JSON text (as `migrate`'s rows do), and
// the config goes back as JSON text. Changes nothing; before configure
// nothing runs, so nothing is changed.
func (m *Module) SettingsCard(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "input"}
	if !d.object(v, "", "rowJson", "sectionJson") {
		return nil, d.err
	}
	rowText := d.str(v.Get("rowJson"), "rowJson", true)
	sectionText := d.str(v.Get("sectionJson"), "sectionJson", true)
	if d.err != nil {
		return nil, d.err
	}
	rowBudget, sectionBudget := maxMigrateValues, maxMigrateValues
	row, err := readConfigText(rowText, "rowJson", &rowBudget)
	if err != nil {
		return nil, err
	}
	section, err := readConfigText(sectionText, "sectionJson", &sectionBudget)
	if err != nil {
		return nil, err
	}
	merged := policy.CardMerge(row, section).JSON()
	problem := policy.CardRefusal(section)
	if problem == "" {
		// The same check as `resolve`'s, on the text a reconfigure would get.
		if _, err := readConfig([]byte(merged)); err != nil {
			problem = err.Error()
		}
	}
	changed := []string{}
	if m.state != nil {
		changed = policy.CardChanged(row, section, m.state.Config())
	}
	var w writer
	w.beginObject("")
	w.str("configJson", merged)
	if problem != "" {
		w.str("problem", problem)
	}
	w.strings("changed", changed)
	w.endObject()
	return w.b, nil
}
