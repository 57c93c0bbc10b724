package migrate_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from this package's output (review the diff)")

// The golden tests: testdata/<case>.json holds rows as the shim reads them
// from YAML (a `!!js` scalar is {"__jsExpr": "..."}), <case>.golden.json the
// migration the shim gets: {row, table, errors, sources}, its table lines
// {plugin, id, key, value, to, toValue, note}. Each goes through the module's
// export (plugin/codec), as the shim calls it.
//
// The goldens of the ordinary cases were written by the JS migration this
// package replaced, run on the same rows, so the port is proven equal to it,
// with one change: our own row's nested keys are listed key by key
// (`tools.maxAttempts` and its value; own-row, expr), where the JS repeated
// the whole map on each line, which made the table quadratic in its size.
// The hostile cases (hostile-*.json) are where that JS was wrong: there the
// golden says what is right, and hostile_test.go says why.
func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob("testdata/*.json")
	require.NoError(t, err)
	n := 0
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden.json") {
			continue
		}
		n++
		name := strings.TrimSuffix(filepath.Base(in), ".json")
		t.Run(name, func(t *testing.T) {
			got := migrateFile(t, in)
			golden := strings.TrimSuffix(in, ".json") + ".golden.json"
			if *update {
				var pretty bytes.Buffer
				require.NoError(t, json.Indent(&pretty, got, "", "  "))
				require.NoError(t, os.WriteFile(golden, append(pretty.Bytes(), '\n'), 0o644))
			}
			want, err := os.ReadFile(golden)
			require.NoError(t, err)
			require.Equal(t, tokens(t, want), tokens(t, got), "%s: in order, key by key", name)
		})
	}
	require.GreaterOrEqual(t, n, 20, "the golden cases")
}

// migrateFile runs the rows of a testdata file through the export and
// answers the shim's shape of the result, as JSON.
func migrateFile(t *testing.T, path string) []byte {
	t.Helper()
	text, err := os.ReadFile(path)
	require.NoError(t, err)
	out, err := codec.Migrate(exportInput(t, text))
	require.NoError(t, err)
	return shimShape(t, out)
}

// exportInput is rows as the shim sends them: each row's config as JSON
// text, an id and a name only when they are strings, disabled only when true.
func exportInput(t testing.TB, rowsJSON []byte) []byte {
	var rows []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rowsJSON, &rows))
	type row struct {
		ID         *string `json:"id,omitempty"`
		Name       *string `json:"name,omitempty"`
		ConfigJSON *string `json:"configJson,omitempty"`
		Disabled   bool    `json:"disabled,omitempty"`
	}
	in := struct {
		Rows []row `json:"rows"`
	}{Rows: []row{}}
	for _, r := range rows {
		var x row
		var s string
		if json.Unmarshal(r["id"], &s) == nil {
			id := s
			x.ID = &id
		}
		if json.Unmarshal(r["name"], &s) == nil {
			name := s
			x.Name = &name
		}
		if c, ok := r["config"]; ok {
			text := string(c)
			x.ConfigJSON = &text
		}
		x.Disabled = string(r["disabled"]) == "true"
		in.Rows = append(in.Rows, x)
	}
	b, err := json.Marshal(in)
	require.NoError(t, err)
	return b
}

// shimShape is what host-shim/migrate.js makes of the export's answer: the
// JSON texts parsed back into values, a line with no new key `to: null`.
func shimShape(t testing.TB, out []byte) []byte {
	var m struct {
		RowJSON string `json:"rowJson"`
		Table   []struct {
			Plugin      string  `json:"plugin"`
			ID          *string `json:"id"`
			Key         string  `json:"key"`
			ValueJSON   *string `json:"valueJson"`
			To          *string `json:"to"`
			ToValueJSON *string `json:"toValueJson"`
			Note        string  `json:"note"`
		} `json:"table"`
		Errors  []string `json:"errors"`
		Sources []struct {
			Plugin   string  `json:"plugin"`
			ID       *string `json:"id"`
			Disabled bool    `json:"disabled"`
		} `json:"sources"`
	}
	require.NoError(t, json.Unmarshal(out, &m))
	var b strings.Builder
	str := func(s string) {
		var e bytes.Buffer
		enc := json.NewEncoder(&e)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(s))
		b.WriteString(strings.TrimSuffix(e.String(), "\n"))
	}
	raw := func(s string) {
		require.True(t, json.Valid([]byte(s)), "not JSON: %s", s)
		b.WriteString(s)
	}
	b.WriteString(`{"row":`)
	raw(m.RowJSON)
	b.WriteString(`,"table":[`)
	for i, l := range m.Table {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"plugin":`)
		str(l.Plugin)
		if l.ID != nil {
			b.WriteString(`,"id":`)
			str(*l.ID)
		}
		b.WriteString(`,"key":`)
		str(l.Key)
		if l.ValueJSON != nil {
			b.WriteString(`,"value":`)
			raw(*l.ValueJSON)
		}
		b.WriteString(`,"to":`)
		if l.To == nil {
			b.WriteString("null")
		} else {
			str(*l.To)
			b.WriteString(`,"toValue":`)
			raw(*l.ToValueJSON)
		}
		b.WriteString(`,"note":`)
		str(l.Note)
		b.WriteByte('}')
	}
	b.WriteString(`],"errors":[`)
	for i, e := range m.Errors {
		if i > 0 {
			b.WriteByte(',')
		}
		str(e)
	}
	b.WriteString(`],"sources":[`)
	for i, s := range m.Sources {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"plugin":`)
		str(s.Plugin)
		if s.ID != nil {
			b.WriteString(`,"id":`)
			str(*s.ID)
		}
		b.WriteString(`,"disabled":`)
		b.WriteString(map[bool]string{true: "true", false: "false"}[s.Disabled])
		b.WriteByte('}')
	}
	b.WriteString("]}")
	return []byte(b.String())
}

// tokens is a JSON text's tokens in order, numbers as written: two texts
// with the same tokens differ at most in spacing and string escapes.
func tokens(t testing.TB, text []byte) []any {
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.UseNumber()
	var out []any
	for {
		tok, err := dec.Token()
		if err != nil {
			require.Equal(t, "EOF", err.Error())
			return out
		}
		out = append(out, tok)
	}
}
