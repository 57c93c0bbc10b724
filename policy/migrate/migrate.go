package migrate

import "fmt"

// Row is one row of the composed config (or of a patch file).
type Row struct {
	ID   string // "" when the row has none
	Name string // its module name; "" when the row has none
	// Config is the row's config; nil when the row has none.
	Config   *Value
	Disabled bool
}

// Result is a migration: our row, the table, and what was refused.
type Result struct {
	// Row is the `resilience` row's config (an object). Printed only when
	// Errors is empty.
	Row Value
	// Table has one line per old key (and per row-wide consequence).
	Table []Line
	// Errors are refusals, each naming the keys: contradictions, and values
	// no row of ours could carry.
	Errors []string
	// Sources are the rows read, in order, each once.
	Sources []Source
}

// Line is one line of the table: an old key and what it became.
type Line struct {
	Plugin string // the package whose row held the key
	ID     string // that row's id ("" when it had none)
	Key    string // the old key, or "(row)" for what the row itself means
	// Value is the old value; nil for a line about the row.
	Value *Value
	// To is our key path; nil when the key has no equivalent (Note says
	// what the user gets instead).
	To      Path
	ToValue Value // the value To is set to; meaningful only with To
	Note    string
}

// Source is one row the migration read.
type Source struct {
	Plugin   string
	ID       string
	Disabled bool
}

// Migrate maps rows to one `resilience` row. Rows of other plugins are
// ignored; our own row takes part like the old ones, so a key it shares with
// an old row must agree.
func Migrate(rows []Row) Result {
	m := migration{}
	for _, r := range rows {
		p := pluginOf(r)
		if p == nil {
			continue
		}
		m.row(p, r)
	}
	res := Result{Row: m.build(), Table: m.table, Errors: m.errors, Sources: m.sources}
	fixRanges(&res)
	if res.Table == nil {
		res.Table = []Line{}
	}
	if res.Errors == nil {
		res.Errors = []string{}
	}
	if res.Sources == nil {
		res.Sources = []Source{}
	}
	return res
}

// migration is the state of one Migrate call.
type migration struct {
	table   []Line
	errors  []string
	sources []Source
	set     []setting        // our keys in the order first set
	at      map[string]int   // a path's setting in set, by Path.key
	under   map[string][]int // the settings inside a path, by Path.key
}

// row migrates one row of p: a disabled row is listed whole and not read.
func (m *migration) row(p *plugin, r Row) {
	m.sources = append(m.sources, Source{Plugin: p.name, ID: r.ID, Disabled: r.Disabled})
	if r.Disabled {
		disabled := Str("disabled")
		m.table = append(m.table, Line{Plugin: p.name, ID: r.ID, Key: "(row)", Value: &disabled,
			Note: "the row is disabled: nothing of it is migrated"})
		return
	}
	config := Obj()
	if r.Config != nil && r.Config.Kind != Null {
		config = *r.Config
	}
	if config.Kind != Object {
		label := p.name
		if r.ID != "" && r.ID != p.name {
			label += " (row " + r.ID + ")"
		}
		m.errors = append(m.errors, label+": config must be an object")
		return
	}
	if p.always != nil {
		for _, o := range p.always() {
			m.assign(o, p, r, "(row)", nil)
		}
	}
	for _, mem := range config.Obj {
		value := mem.Val
		f := p.key(mem.Key)
		if f == nil {
			m.table = append(m.table, Line{Plugin: p.name, ID: r.ID, Key: mem.Key, Value: &value,
				Note: fmt.Sprintf("not a key %s documents: not migrated; check what it did by hand", p.name)})
			continue
		}
		outs, err := f(value, config)
		if err != nil {
			m.errors = append(m.errors, p.name+" key "+quote(mem.Key)+": "+err.Error())
			continue
		}
		for i, o := range outs {
			m.assign(o, p, r, mem.Key, lineValue(o, i, &value))
		}
	}
}

// lineValue is the old value an outcome's line shows: the part it is about,
// the whole on a key's first line, and nothing on a further line (a
// warning): a value repeated on every line made the table quadratic in it.
func lineValue(o out, i int, whole *Value) *Value {
	switch {
	case o.part != "":
		part := o.old
		return &part
	case i == 0:
		return whole
	}
	return nil
}

// assign lists one outcome of an old key and sets our key, unless another
// key set it (or a key around it) to something else.
func (m *migration) assign(o out, p *plugin, r Row, key string, value *Value) {
	line := key
	if o.part != "" {
		line = o.part
	}
	m.table = append(m.table, Line{Plugin: p.name, ID: r.ID, Key: line, Value: value, To: o.to, ToValue: o.value, Note: o.note})
	if o.to == nil {
		return
	}
	s := setting{path: o.to, value: o.value, from: fmt.Sprintf("%s key %s", p.name, quote(key))}
	if err := m.claim(s); err != "" {
		m.errors = append(m.errors, err)
	}
}

// quote is a key in double quotes, as the refusals have always named keys
// (JS template text, not JSON: the key is shown as written).
func quote(key string) string { return `"` + key + `"` }
