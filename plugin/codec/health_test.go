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

// `live` says the health is news received at nowMs: a writer 10 min behind's
// fresh open holds for its open time from then; without it (a restore at
// start) the same record is read by its writer's clock and is due. A `live`
// that is not a boolean is refused by name.
func TestHealthLiveRestoreTimesNewsFromReceipt(t *testing.T) {
	const now = 1000000
	behind := `"channels":[{"channel":{"provider":"p","model":"a"},"state":"open","failures":1,"opens":1,"openUntilMs":` +
		itoa(now-600000+30000) + `,"lastCode":"SERVER","changedAtMs":` + itoa(now-600000) + `,"version":1}]`
	for _, tc := range []struct {
		live string
		want int64
	}{{``, now - 600000 + 30000}, {`,"live":false`, now - 600000 + 30000}, {`,"live":true`, now + 30000}} {
		m := new(Module)
		if _, err := m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}]}`)); err != nil {
			t.Fatal(err)
		}
		if out, err := m.Restore([]byte(`{"nowMs":` + itoa(now) + tc.live + `,` + behind + `}`)); err != nil || gjson.GetBytes(out, "adopted").Int() != 1 {
			t.Fatalf("%q: %s %v", tc.live, out, err)
		}
		snap, _ := m.Snapshot(nil)
		if got := gjson.GetBytes(snap, "channels.0.openUntilMs").Int(); got != tc.want {
			t.Errorf("%q: open until now%+d, want now%+d", tc.live, got-now, tc.want-now)
		}
	}
	m := new(Module)
	m.Configure([]byte(`{"chain":[{"provider":"p","model":"a"}]}`))
	if _, err := m.Restore([]byte(`{"nowMs":1,"live":"yes","channels":[]}`)); err == nil || !strings.Contains(err.Error(), "live") {
		t.Fatalf("a non-boolean live was not refused by name: %v", err)
	}
}
