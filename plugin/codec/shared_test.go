package codec

import (
	"testing"

	"github.com/tidwall/gjson"
)

// What the shared store is known to hold comes from its records (read or
// published), from writes reported done, and from a snapshot passed back to
// a new instance; what it needs is what wins over that.
func TestSharedWritesFollowWhatTheStoreHolds(t *testing.T) {
	const cfg = `{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}],"healthPruneMs":60000}`
	const rec = `{"channel":{"provider":"p","model":"a"},"state":"open","failures":3,"opens":1,"openUntilMs":1030000,"lastCode":"QUOTA","changedAtMs":1000000,"version":5}`
	module := func(t *testing.T) *Module {
		m := new(Module)
		if _, err := m.Configure([]byte(cfg)); err != nil {
			t.Fatal(err)
		}
		return m
	}
	writes := func(t *testing.T, m *Module, in string) gjson.Result {
		out, err := m.SharedWrites([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		return gjson.GetBytes(out, "writes")
	}
	for _, tc := range []struct {
		name    string
		restore string // merged first, at nowMs 1000000
		query   string
		due     int
	}{
		{"a record from the file is not known held", `"channels":[` + rec + `]`, `{}`, 1},
		{"a record read from the store is held", `"fromShared":true,"channels":[` + rec + `]`, `{}`, 0},
		{"a published record is held", `"fromShared":true,"live":true,"channels":[` + rec + `]`, `{}`, 0},
		{"a snapshot's list passed back is held", `"channels":[` + rec + `],"shared":[` + rec + `]`, `{}`, 0},
		{"after an outage it is due again", `"fromShared":true,"channels":[` + rec + `]`, `{"forget":true}`, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := module(t)
			if _, err := m.Restore([]byte(`{"nowMs":1000000,` + tc.restore + `}`)); err != nil {
				t.Fatal(err)
			}
			if got := writes(t, m, tc.query); len(got.Array()) != tc.due {
				t.Fatalf("due %s", got.Raw)
			}
		})
	}
	// Written, it is held; the snapshot carries that to a new instance.
	m := module(t)
	if _, err := m.Restore([]byte(`{"nowMs":1000000,"channels":[` + rec + `]}`)); err != nil {
		t.Fatal(err)
	}
	due := writes(t, m, `{}`)
	if due.Get("0.expireAtMs").Int() != 1090000+180000 || due.Get("0.record.version").Int() != 5 {
		t.Fatalf("due %s", due.Raw)
	}
	if out, err := m.SharedWritten([]byte(`{"records":[` + due.Get("0.record").Raw + `]}`)); err != nil || gjson.GetBytes(out, "held").Int() != 1 {
		t.Fatalf("%s %v", out, err)
	}
	snap, _ := m.Snapshot(nil)
	n := module(t)
	if _, err := n.Restore([]byte(`{"nowMs":1000000,` + string(snap[1:]))); err != nil {
		t.Fatal(err)
	}
	if got := writes(t, n, `{}`); len(got.Array()) != 0 || len(writes(t, m, `{}`).Array()) != 0 {
		t.Fatalf("written records due again: %s (snapshot %s)", got.Raw, snap)
	}
}
