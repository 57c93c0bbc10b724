package testhost

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// The settings-card export through the built module: inputs and answers in
// the WIT JSON mapping; a fresh instance answers the config and the check
// (the shim asks one before the module is up) and changes nothing; once
// configured it names the keys a section would change.
func TestSettingsCardExportConforms(t *testing.T) {
	inst := newInstance(t)
	row := `{"chain":[{"provider":"p","model":"a","failureThreshold":1},{"provider":"p","model":"b"}],"quota":{"longTermDelayMs":1500}}`
	ask := func(section string) (out struct {
		ConfigJSON string   `json:"configJson"`
		Problem    *string  `json:"problem"`
		Changed    []string `json:"changed"`
	}) {
		t.Helper()
		in, err := json.Marshal(map[string]string{"rowJson": row, "sectionJson": section})
		require.NoError(t, err)
		checkInput(t, step{export: "settings-card", in: string(in)})
		raw, err := inst.Call("settings-card", in)
		require.NoError(t, err, section)
		checkOutput(t, "settings-card", raw)
		require.NoError(t, json.Unmarshal(raw, &out))
		return out
	}
	swap := `{"chain":[{"provider":"p","model":"b"},{"provider":"p","model":"a"}],"quota":{"defaultEnabled":false}}`
	fresh := ask(swap)
	require.JSONEq(t, `{"chain":[{"provider":"p","model":"b"},{"provider":"p","model":"a","failureThreshold":1}],"quota":{"longTermDelayMs":1500,"defaultEnabled":false}}`, fresh.ConfigJSON)
	require.Nil(t, fresh.Problem)
	require.Empty(t, fresh.Changed, "nothing runs before configure")
	bad := ask(`{"failureThreshold":0}`)
	require.NotNil(t, bad.Problem)
	require.Contains(t, *bad.Problem, `config key "failureThreshold"`)

	_, err := inst.Call("configure", []byte(row))
	require.NoError(t, err)
	require.Equal(t, []string{"failureThreshold", "cooldownMs", "recovery", "persistent", "retryUnknown", "unknownMaxRetries", "chain", "quota"}, ask(swap).Changed)
	_, err = inst.Call("settings-card", []byte(`{"rowJson":"{"}`))
	require.ErrorContains(t, err, `settings-card: input "sectionJson": is required`)
}
