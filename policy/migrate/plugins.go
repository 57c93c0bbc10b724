package migrate

// plugin is one of the plugins whose rows a migration reads: the names its
// rows are found by, and what each documented key becomes.
type plugin struct {
	name string   // its package name, as the table shows it
	ids  []string // the row ids it is found by, beside its name
	// always is what its row means by being there (reconnect: persistent).
	always func() []out
	// keys maps each documented key; a key not here is listed as not migrated.
	keys map[string]keyMap
	// any maps every key (our own row, whose keys carry over).
	any func(key string, v Value) []out
}

// keyMap maps one old key's value (with its row's config, for a key that
// depends on another) to what it becomes, or refuses it.
type keyMap func(v, config Value) ([]out, error)

// out is one outcome of an old key: our key and value, or no equivalent
// (to nil) and a note saying what the user gets instead.
type out struct {
	to    Path
	value Value
	note  string
	// part names the part of the old value this outcome is about (our own
	// row's tools.maxAttempts, of tools); "" for the whole.
	part string
	old  Value // that part's value, with part
}

// to and none build the outcomes.
func to(path Path, v Value, note string) []out { return []out{{to: path, value: v, note: note}} }
func none(note string) []out                   { return []out{{note: note}} }

// noneKey is a key with no equivalent whatever its value.
func noneKey(note string) keyMap {
	return func(Value, Value) ([]out, error) { return none(note), nil }
}

func (p *plugin) key(k string) keyMap {
	if p.any != nil {
		return func(v, _ Value) ([]out, error) { return p.any(k, v), nil }
	}
	return p.keys[k]
}

// plugins are searched in this order; a row is the first one's that names it.
var plugins = []*plugin{&daruma, &reconnect, &quotaRetry, &toolRetry, &modelFailover, &own}

// pluginOf is the plugin a row belongs to: by its module name or its id.
func pluginOf(r Row) *plugin {
	for _, p := range plugins {
		if r.Name != "" && r.Name == p.name {
			return p
		}
		for _, id := range p.ids {
			if r.ID == id {
				return p
			}
		}
	}
	return nil
}
