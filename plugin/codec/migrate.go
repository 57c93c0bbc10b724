package codec

import (
	"fmt"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy/migrate"
	"github.com/tidwall/gjson"
)

// The `migrate` export: the rows of the plugins dsh-resilience replaces in,
// one `resilience` row and the table of every old key out (policy/migrate).
// A row's config is free-form JSON, which the WIT mapping has no type for,
// so it travels as JSON text (`configJson`), and so do the values that come
// out (`rowJson`, `valueJson`, `toValueJson`).

func init() {
	register("migrate", func(_ *Module, input []byte) ([]byte, error) { return Migrate(input) })
}

// Bounds of a migration's input: a composed config has tens of rows and
// short strings, and anything far past that is not one (a fuzzer's, or a
// file read by mistake). Refused naming the field, before any work.
const (
	maxMigrateRows = 1000
	// maxConfigText bounds one row's config text.
	maxConfigText = 1 << 20
	// maxMigrateString bounds a string anywhere in a row: an id, a name, a
	// key, a value (a script's path, a !!js expression).
	maxMigrateString = 16 << 10
	// maxMigrateValues bounds the values of all rows' configs together (a
	// composed config holds hundreds): the mapping compares each key it sets
	// with those set before it, which stays cheap only for a bounded count.
	maxMigrateValues = 10_000
)

// Migrate answers the migration of the rows in input.
func Migrate(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	rows, err := readRows(v)
	if err != nil {
		return nil, err
	}
	return writeMigration(migrate.Migrate(rows)), nil
}

func readRows(v gjson.Result) ([]migrate.Row, error) {
	d := decoder{prefix: "input"}
	if !d.object(v, "", "rows") {
		return nil, d.err
	}
	list := d.array(v.Get("rows"), "rows", true)
	if d.err != nil {
		return nil, d.err
	}
	if len(list) > maxMigrateRows {
		return nil, fmt.Errorf("input \"rows\": %d rows, more than %d", len(list), maxMigrateRows)
	}
	rows := make([]migrate.Row, 0, len(list))
	budget := maxMigrateValues
	for i, r := range list {
		path := "rows[" + strconv.Itoa(i) + "]"
		if !d.object(r, path, "id", "name", "configJson", "disabled") {
			return nil, d.err
		}
		row := migrate.Row{
			ID:       d.str(r.Get("id"), path+".id", false),
			Name:     d.str(r.Get("name"), path+".name", false),
			Disabled: d.boolean(r.Get("disabled"), path+".disabled"),
		}
		text := d.str(r.Get("configJson"), path+".configJson", false)
		if d.err != nil {
			return nil, d.err
		}
		for _, f := range []struct{ name, s string }{{"id", row.ID}, {"name", row.Name}} {
			if len(f.s) > maxMigrateString {
				return nil, fmt.Errorf("input %q: longer than %d bytes", path+"."+f.name, maxMigrateString)
			}
		}
		if present(r.Get("configJson")) {
			config, err := readConfigText(text, path+".configJson", &budget)
			if err != nil {
				return nil, err
			}
			row.Config = &config
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// readConfigText reads one row's config, as JSON text, into a value, taking
// its values from budget.
func readConfigText(text, path string, budget *int) (migrate.Value, error) {
	switch {
	case len(text) > maxConfigText:
		return migrate.Value{}, fmt.Errorf("input %q: longer than %d bytes", path, maxConfigText)
	case tooDeep([]byte(text), maxDepth):
		return migrate.Value{}, fmt.Errorf("input %q: nests deeper than %d levels", path, maxDepth)
	case !gjson.Valid(text):
		return migrate.Value{}, fmt.Errorf("input %q: not valid JSON", path)
	}
	return value(gjson.Parse(text), path, "", budget)
}

// value converts JSON into a migrate.Value, in order. Of duplicate keys the
// last value wins, in the first one's place, as JSON.parse has it (the shim
// sends JSON.stringify's text, which has none). Depth is bounded by tooDeep.
func value(r gjson.Result, path, at string, budget *int) (migrate.Value, error) {
	if *budget--; *budget < 0 {
		return migrate.Value{}, fmt.Errorf("input %q: more than %d values in all rows' configs together", path, maxMigrateValues)
	}
	long := func(s string) error {
		if len(s) <= maxMigrateString {
			return nil
		}
		where := at
		if where == "" {
			where = "(the config)"
		}
		return fmt.Errorf("input %q: the string at %s is longer than %d bytes", path, where, maxMigrateString)
	}
	switch {
	case r.IsObject():
		out := migrate.Obj()
		var err error
		r.ForEach(func(k, v gjson.Result) bool {
			key := k.String()
			if err = long(key); err != nil {
				return false
			}
			var x migrate.Value
			if x, err = value(v, path, join(at, key), budget); err != nil {
				return false
			}
			out.Set(key, x)
			return true
		})
		return out, err
	case r.IsArray():
		out := migrate.List()
		var err error
		i := 0
		r.ForEach(func(_, v gjson.Result) bool {
			var x migrate.Value
			if x, err = value(v, path, at+"["+strconv.Itoa(i)+"]", budget); err != nil {
				return false
			}
			out.Arr = append(out.Arr, x)
			i++
			return true
		})
		return out, err
	}
	switch r.Type {
	case gjson.String:
		return migrate.Str(r.Str), long(r.Str)
	case gjson.Number:
		return migrate.Num(r.Num), nil
	case gjson.True, gjson.False:
		return migrate.Boolean(r.Bool()), nil
	}
	return migrate.Value{}, nil
}

// writeMigration is the answer: the WIT record `migrated`.
func writeMigration(res migrate.Result) []byte {
	var w writer
	w.beginObject("")
	w.str("rowJson", res.Row.JSON())
	w.beginArray("table")
	for _, l := range res.Table {
		w.beginObject("")
		w.str("plugin", l.Plugin)
		if l.ID != "" {
			w.str("id", l.ID)
		}
		w.str("key", l.Key)
		if l.Value != nil {
			w.str("valueJson", l.Value.JSON())
		}
		if l.To != nil {
			w.str("to", l.To.String())
			w.str("toValueJson", l.ToValue.JSON())
		}
		w.str("note", l.Note)
		w.endObject()
	}
	w.endArray()
	w.strings("errors", res.Errors)
	w.beginArray("sources")
	for _, s := range res.Sources {
		w.beginObject("")
		w.str("plugin", s.Plugin)
		if s.ID != "" {
			w.str("id", s.ID)
		}
		w.boolean("disabled", s.Disabled)
		w.endObject()
	}
	w.endArray()
	w.endObject()
	return w.b
}
