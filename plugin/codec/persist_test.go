package codec

import (
	"testing"

	"github.com/tidwall/gjson"
)

// A restore takes no closed record past the row's healthPruneMs (plus the
// clock skew hosts may have: 60 s + 180 s here), and the
// file's content (persist) keeps none; an old open record is both taken and
// kept. The cold-pass word comes beside the file, never in it.
func TestPruneOnRestoreAndPersist(t *testing.T) {
	m := new(Module)
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}],"healthPruneMs":60000}`)); err != nil {
		t.Fatal(err)
	}
	closed := `{"channel":{"provider":"p","model":"a"},"state":"closed","failures":0,"opens":2,"openUntilMs":0,"lastCode":"","changedAtMs":1000000,"version":7}`
	open := `{"channel":{"provider":"p","model":"b"},"state":"open","failures":3,"opens":1,"openUntilMs":1030000,"lastCode":"QUOTA","changedAtMs":1000000,"version":5}`
	out, err := m.Restore([]byte(`{"nowMs":1240001,"channels":[` + closed + `,` + open + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := gjson.GetBytes(out, "adopted").Int(); got != 1 {
		t.Fatalf("adopted %d, want the open record only: %s", got, out)
	}
	p, err := m.Persist([]byte(`{"nowMs":1240001}`))
	if err != nil {
		t.Fatal(err)
	}
	v := gjson.ParseBytes(p)
	for _, h := range v.Get("health.channels").Array() {
		if h.Get("state").Str == "closed" && h.Get("changedAtMs").Int() < 1000001 {
			t.Fatalf("a stale record is kept: %s", p)
		}
	}
	if v.Get("health.channels.#(channel.model==\"b\").version").Int() != 5 || v.Get("coldPass").Type != gjson.False ||
		v.Get("health.coldPass").Exists() || v.Get("health.slow").Exists() || v.Get("health.shared").Exists() {
		t.Fatalf("persisted %s", p)
	}
	if _, err := m.Persist([]byte(`{}`)); err == nil {
		t.Fatal("persist without nowMs")
	}
}
