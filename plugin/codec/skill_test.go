package codec

import (
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// The bundled skill is model-visible context: it is off unless the row says
// `skill: true`, resolved like any key, and a non-boolean is refused by name.
func TestSkillKey(t *testing.T) {
	for _, tc := range []struct {
		row  string
		want bool
		err  string
	}{
		{row: `{}`, want: false},
		{row: `{"skill":true}`, want: true},
		{row: `{"skill":false}`, want: false},
		{row: `{"skill":"yes"}`, err: `config key "skill"`},
		{row: `{"skill":null}`, want: false}, // as every boolean key: null is left out
		{row: `{"skill":1}`, err: `config key "skill"`},
	} {
		cfg, err := decodeConfig(gjson.Parse(tc.row))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error naming %s", tc.row, err, tc.err)
			}
			continue
		}
		if err != nil || cfg.Skill != tc.want {
			t.Errorf("%s: skill %v (%v), want %v", tc.row, cfg.Skill, err, tc.want)
		}
		out, err := Resolve([]byte(tc.row))
		if err != nil {
			t.Fatal(err)
		}
		if got := gjson.GetBytes(out, "config.skill"); got.Type == gjson.Null || got.Bool() != tc.want {
			t.Errorf("%s: the resolved config says skill %s, want %v", tc.row, got.Raw, tc.want)
		}
	}
}
