package migrate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/plugin/codec"
	"github.com/tidwall/gjson"
)

// FuzzMigrate feeds the export's row reader anything: it must refuse or
// answer, never panic, and an answer must hold every key of every row it
// migrated, in JSON the shim can parse. Seeded with the golden cases.
func FuzzMigrate(f *testing.F) {
	inputs, _ := filepath.Glob("testdata/*.json")
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden.json") {
			continue
		}
		text, err := os.ReadFile(in)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(exportInput(f, text))
	}
	f.Add([]byte(`{"rows":[{"id":"resilience","configJson":"{\"a\":{\"b\":[1,{\"__jsExpr\":\"x\"}]}}"}]}`))
	f.Fuzz(func(t *testing.T, input []byte) {
		out, err := codec.Migrate(input)
		if err != nil {
			return
		}
		again, err := codec.Migrate(input)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not a function of its input: %s vs %s (%v)", out, again, err)
		}
		var res struct {
			RowJSON string `json:"rowJson"`
			Table   []struct {
				Key         string  `json:"key"`
				ID          *string `json:"id"`
				ValueJSON   *string `json:"valueJson"`
				ToValueJSON *string `json:"toValueJson"`
			} `json:"table"`
			Errors []string `json:"errors"`
		}
		if err := json.Unmarshal(out, &res); err != nil {
			t.Fatalf("answer is not JSON: %v: %s", err, out)
		}
		texts := []string{res.RowJSON}
		for _, l := range res.Table {
			for _, p := range []*string{l.ValueJSON, l.ToValueJSON} {
				if p != nil {
					texts = append(texts, *p)
				}
			}
		}
		for _, s := range texts {
			if !json.Valid([]byte(s)) {
				t.Fatalf("a value is not JSON: %q", s)
			}
		}
		// Every key of a row migrated without a refusal has its line. Read
		// as the codec reads it (gjson: the first of duplicate fields).
		if len(res.Errors) > 0 {
			return
		}
		for _, r := range gjson.GetBytes(input, "rows").Array() {
			id, config := r.Get("id").Str, gjson.Parse(r.Get("configJson").Str)
			if r.Get("disabled").Bool() || !known[id] || !config.IsObject() {
				continue
			}
			config.ForEach(func(k, _ gjson.Result) bool {
				key := string([]rune(k.String())) // as the answer writes it: a byte that is not UTF-8 is U+FFFD
				found := false
				for _, l := range res.Table {
					found = found || l.Key == key && l.ID != nil && *l.ID == id
				}
				if !found {
					t.Fatalf("row %s key %q is not in the table: %s", id, key, out)
				}
				return true
			})
		}
	})
}

// known are row ids a migration reads.
var known = map[string]bool{
	"dsh-daruma": true, "daruma": true, "dsh-reconnect": true, "reconnect": true, "llm-quota-retry": true, "quota-retry": true,
	"dsh-llm-quota-retry": true, "tool-retry": true, "dsh-plugin-tool-retry": true, "model-failover": true, "dsh-model-failover": true,
}
