package policy

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/policy/migrate"
)

// jsonValue reads JSON text into a value, members in the order written.
func jsonValue(t *testing.T, text string) migrate.Value {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var read func() migrate.Value
	read = func() migrate.Value {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		switch x := tok.(type) {
		case json.Delim:
			if x == '[' {
				v := migrate.List()
				for dec.More() {
					v.Arr = append(v.Arr, read())
				}
				dec.Token()
				return v
			}
			v := migrate.Obj()
			for dec.More() {
				k, _ := dec.Token()
				v.Set(k.(string), read())
			}
			dec.Token()
			return v
		case json.Number:
			f, _ := x.Float64()
			return migrate.Num(f)
		case string:
			return migrate.Str(x)
		case bool:
			return migrate.Boolean(x)
		}
		return migrate.Value{}
	}
	return read()
}

func TestCardMerge(t *testing.T) {
	for _, c := range []struct{ name, row, section, want string }{
		{"a section key replaces the row's, in its place", `{"failureThreshold":5,"chain":[]}`, `{"failureThreshold":2,"cooldownMs":9}`,
			`{"failureThreshold":2,"chain":[],"cooldownMs":9}`},
		{"keys the card does not tune stay the row's", `{"hedge":{"afterMs":1}}`, `{"hedge":{"afterMs":2},"probes":true}`, `{"hedge":{"afterMs":1}}`},
		{"a null in the section is a value", `{"recovery":"stay"}`, `{"recovery":null}`, `{"recovery":null}`},
		{"a chain entry keeps the row entry's own settings", `{"chain":[{"provider":"p","model":"a","failureThreshold":1},{"provider":"p","model":"b"}]}`,
			`{"chain":[{"provider":"p","model":"b"},{"provider":"p","model":"a"}]}`,
			`{"chain":[{"provider":"p","model":"b"},{"provider":"p","model":"a","failureThreshold":1}]}`},
		{"a chain that is no list goes whole", `{"chain":[]}`, `{"chain":"p/a"}`, `{"chain":"p/a"}`},
		{"an entry that is a string spreads as the shim's JS did", `{}`, `{"chain":["ab"]}`, `{"chain":[{"0":"a","1":"b"}]}`},
		{"defaultEnabled merged into the row's quota", `{"quota":{"defaultEnabled":false,"longTermDelayMs":1500}}`, `{"quota":{"defaultEnabled":true}}`,
			`{"quota":{"defaultEnabled":true,"longTermDelayMs":1500}}`},
		{"a row without quota gets {defaultEnabled}", `{}`, `{"quota":{"defaultEnabled":true}}`, `{"quota":{"defaultEnabled":true}}`},
		{"an empty section quota adds nothing", `{}`, `{"quota":{}}`, `{}`},
		{"a section quota that is no object goes whole", `{"quota":{"failOpen":true}}`, `{"quota":"on"}`, `{"quota":"on"}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CardMerge(jsonValue(t, c.row), jsonValue(t, c.section)).JSON(); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestCardRefusal(t *testing.T) {
	for _, c := range []struct{ section, want string }{
		{`{"quota":{"defaultEnabled":true}}`, ""},
		{`{"quota":"on"}`, ""}, // the check's to name
		{`{"quota":{"defaultEnabled":true,"longTermDelayMs":5}}`,
			`config key "quota.longTermDelayMs": the settings card sets only quota.defaultEnabled; the rest of quota is the row's`},
		{`{"quota":{"` + strings.Repeat("k", 70) + `":1}}`,
			`config key "quota.` + strings.Repeat("k", 64) + `": the settings card sets only quota.defaultEnabled; the rest of quota is the row's`},
	} {
		if got := CardRefusal(jsonValue(t, c.section)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.section, got, c.want)
		}
	}
}

func TestCardChanged(t *testing.T) {
	plain := DefaultConfig()
	plain.Chain = []Channel{{"p", "a"}, {"p", "b"}}
	persistent := plain
	persistent.Persistent, persistent.BackoffMaxMs = true, PersistentBackoffMaxMs
	quota := plain
	quota.Quota = QuotaConfig{Active: true, DefaultEnabled: true}
	same := `"failureThreshold":3,"cooldownMs":60000,"recovery":"return","persistent":false,"retryUnknown":true,"unknownMaxRetries":3,` +
		`"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b","failureThreshold":9}]`
	for _, c := range []struct {
		name, row, section string
		cfg                Config
		want               string
	}{
		{"the schema's defaults change nothing; entries compared as {provider, model}", `{}`, `{` + same + `}`, plain, ""},
		{"a key left out differs", `{}`, `{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}]}`, plain,
			"failureThreshold cooldownMs recovery persistent retryUnknown unknownMaxRetries"},
		{"persistent turned on reads the unset wait as its own cap", `{}`, `{` + strings.Replace(same, `"persistent":false`, `"persistent":true`, 1) + `}`, plain,
			"backoffMaxMs persistent"},
		{"the running persistent wait is no change", `{}`, `{` + strings.Replace(same, `"persistent":false`, `"persistent":true`, 1) + `}`, persistent, ""},
		{"unset, the wait is the row's", `{"backoffMaxMs":10000}`, `{` + same + `}`, plain, "backoffMaxMs"},
		{"quota while the rules apply", `{}`, `{` + same + `,"quota":{"defaultEnabled":false}}`, quota, "quota"},
		{"quota as running", `{}`, `{` + same + `,"quota":{"defaultEnabled":true}}`, quota, ""},
		{"an empty quota on a row without rules", `{}`, `{` + same + `,"quota":{}}`, plain, ""},
		{"a chain that is no list is a change", `{}`, `{` + strings.Replace(same, `"chain":[`, `"chain":"x","c":[`, 1) + `}`, plain, "chain"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := strings.Join(CardChanged(jsonValue(t, c.row), jsonValue(t, c.section), c.cfg), " ")
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}
