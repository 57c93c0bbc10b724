package codec

import (
	"strconv"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// A record's version survives a snapshot and a restore, and decides the merge
// whatever the clocks in the records say.
func TestHealthVersionRoundTrips(t *testing.T) {
	m := new(Module)
	if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}],"maxClockSkewMs":60000}`)); err != nil {
		t.Fatal(err)
	}
	rec := func(state string, changed, version int) string {
		return `{"nowMs":1000000,"channels":[{"channel":{"provider":"p","model":"a"},"state":"` + state +
			`","failures":3,"opens":1,"openUntilMs":` + itoa(changed+30000) + `,"lastCode":"QUOTA","changedAtMs":` + itoa(changed) +
			`,"version":` + itoa(version) + `}]}`
	}
	if out, err := m.Restore([]byte(rec("open", 1000000+600000, 5))); err != nil || gjson.GetBytes(out, "adopted").Int() != 1 {
		t.Fatalf("%s %v", out, err)
	}
	snap, _ := m.Snapshot(nil)
	got := gjson.GetBytes(snap, "channels.0")
	if got.Get("version").Int() != 5 || got.Get("openUntilMs").Int() != 1000000+30000 {
		t.Fatalf("a 10-min-ahead writer's open was not clamped to what it observed, or lost its version: %s", got.Raw)
	}
	// A closed record "changed later" by a clock far ahead, at a lower version, loses.
	if out, _ := m.Restore([]byte(rec("closed", 9000000, 4))); gjson.GetBytes(out, "adopted").Int() != 0 {
		t.Fatalf("an older version won: %s", out)
	}
	if _, err := new(Module).Configure([]byte(`{"maxClockSkewMs":99999999999}`)); err == nil || !strings.Contains(err.Error(), "maxClockSkewMs") {
		t.Fatalf("an out-of-range skew was not refused by name: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
