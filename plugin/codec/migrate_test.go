package codec

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The export's door: the WIT record in, each row's config as JSON text, and
// bounds that refuse naming the field. The mapping itself is policy/migrate's
// (its golden tests go through this export).
func TestMigrateExport(t *testing.T) {
	out, err := (&Module{}).Call("migrate", []byte(`{"rows":[
		{"id":"dsh-daruma","configJson":"{\"channels\":[\"p/a\"],\"cooldownMs\":{\"__jsExpr\":\"6e4\"},\"stateFile\":\"x\"}"},
		{"id":"dsh-reconnect","disabled":true},
		{"id":"someone-else","configJson":"[1]"}]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"rowJson":"{\"chain\":[{\"provider\":\"p\",\"model\":\"a\"}],\"cooldownMs\":{\"__jsExpr\":\"6e4\"}}",
		"table":[
			{"plugin":"dsh-daruma","id":"dsh-daruma","key":"channels","valueJson":"[\"p/a\"]","to":"chain","toValueJson":"[{\"provider\":\"p\",\"model\":\"a\"}]","note":"same order; the first is the primary"},
			{"plugin":"dsh-daruma","id":"dsh-daruma","key":"cooldownMs","valueJson":"{\"__jsExpr\":\"6e4\"}","to":"cooldownMs","toValueJson":"{\"__jsExpr\":\"6e4\"}","note":"doubles while the outage lasts, up to maxCooldownMs; a provider's Retry-After extends it"},
			{"plugin":"dsh-daruma","id":"dsh-daruma","key":"stateFile","valueJson":"\"x\"","note":"no equivalent: channel health lives in <stateDir>/health.json ($DSH_HOME/dsh-resilience; set stateDir to move it); daruma's file is not read"},
			{"plugin":"dsh-reconnect","id":"dsh-reconnect","key":"(row)","valueJson":"\"disabled\"","note":"the row is disabled: nothing of it is migrated"}],
		"errors":[],
		"sources":[{"plugin":"dsh-daruma","id":"dsh-daruma","disabled":false},{"plugin":"dsh-reconnect","id":"dsh-reconnect","disabled":true}]}`, string(out))

	empty, err := Migrate([]byte(`{"rows":[]}`))
	require.NoError(t, err)
	require.JSONEq(t, `{"rowJson":"{}","table":[],"errors":[],"sources":[]}`, string(empty))
}

func TestMigrateRefusals(t *testing.T) {
	row := func(fields string) string { return `{"rows":[` + fields + `]}` }
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	long := strings.Repeat("x", maxMigrateString+1)
	many := strings.TrimSuffix(strings.Repeat(`{"id":"a"},`, maxMigrateRows+1), ",")
	for _, tc := range []struct{ in, err string }{
		{`[]`, `input "(root)": must be an object`},
		{`{"rows":{}}`, `input "rows": must be an array`},
		{`{}`, `input "rows": is required`},
		{`{"rows":[],"extra":1}`, `input "extra": unknown key`},
		{row(`{"id":5}`), `input "rows[0].id": must be a string`},
		{row(`{"name":"dsh-daruma","disabled":"yes"}`), `input "rows[0].disabled": must be a boolean`},
		{row(`{"config":{}}`), `input "rows[0].config": unknown key`},
		{row(`{"configJson":{}}`), `input "rows[0].configJson": must be a string`},
		{row(`{"configJson":"{"}`), `input "rows[0].configJson": not valid JSON`},
		{row(fmt.Sprintf(`{"configJson":%q}`, `{"a":`+deep+`}`)), `input "rows[0].configJson": nests deeper than 32 levels`},
		{row(fmt.Sprintf(`{"id":"x"},{"configJson":%q}`, `{"pools":{"main":["`+long+`"]}}`)), `input "rows[1].configJson": the string at pools.main[0] is longer than 16384 bytes`},
		{row(fmt.Sprintf(`{"configJson":%q}`, `{"`+long+`":1}`)), `the string at (the config) is longer`},
		{row(fmt.Sprintf(`{"name":%q}`, long)), `input "rows[0].name": longer than 16384 bytes`},
		{row(many), `input "rows": 1001 rows, more than 1000`},
		{`{"rows":` + deep + `}`, `input nests deeper than 32 levels`},
		{row(fmt.Sprintf(`{"configJson":%q},{"configJson":%q}`, "["+strings.Repeat("1,", maxMigrateValues/2)+"1]", "["+strings.Repeat("1,", maxMigrateValues/2)+"1]")),
			`input "rows[1].configJson": more than 10000 values in all rows' configs together`},
	} {
		_, err := Migrate([]byte(tc.in))
		require.Error(t, err, tc.in[:min(len(tc.in), 80)])
		require.Contains(t, err.Error(), tc.err)
	}
}

// Duplicate keys read as JSON.parse reads them: the last value, in the first's place.
func TestMigrateDuplicateKeys(t *testing.T) {
	out, err := Migrate([]byte(`{"rows":[{"id":"resilience","configJson":"{\"a\":1,\"b\":2,\"a\":3}"}]}`))
	require.NoError(t, err)
	require.Contains(t, string(out), `"rowJson":"{\"a\":3,\"b\":2}"`)
}
