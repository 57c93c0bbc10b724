package testhost

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The migrate export through the built module: every golden case's input
// is a valid `migrate-input`, and every answer a valid `migrated`, in the
// WIT JSON mapping; a fresh instance answers without configure.
func TestMigrateExportConforms(t *testing.T) {
	inst := newInstance(t)
	cases, err := filepath.Glob(filepath.Join(repoRoot, "policy", "migrate", "testdata", "*.json"))
	require.NoError(t, err)
	n := 0
	for _, c := range cases {
		if strings.HasSuffix(c, ".golden.json") {
			continue
		}
		text, err := os.ReadFile(c)
		require.NoError(t, err)
		in := migrateInput(t, text)
		checkInput(t, step{export: "migrate", in: in})
		out, err := inst.Call("migrate", []byte(in))
		require.NoError(t, err, c)
		checkOutput(t, "migrate", out)
		n++
	}
	require.Greater(t, n, 0)
	_, err = inst.Call("migrate", []byte(`{"rows":[{"configJson":"{"}]}`))
	require.ErrorContains(t, err, `migrate: input "rows[0].configJson": not valid JSON`)
}

// migrateInput is rows as the shim sends them (host-shim/migrate.js): each
// config as JSON text, string ids and names, disabled when true.
func migrateInput(t testing.TB, rowsJSON []byte) string {
	var rows []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rowsJSON, &rows))
	list := []map[string]any{}
	for _, r := range rows {
		row := map[string]any{"disabled": string(r["disabled"]) == "true"}
		for _, k := range []string{"id", "name"} {
			var s string
			if json.Unmarshal(r[k], &s) == nil {
				row[k] = s
			}
		}
		if c, ok := r["config"]; ok {
			row["configJson"] = string(c)
		}
		list = append(list, row)
	}
	b, err := json.Marshal(map[string]any{"rows": list})
	require.NoError(t, err)
	return string(b)
}
