package policy

import (
	"slices"
	"testing"
)

// An old quota-marks.json folds its live, unlifted marks into the
// providers' health records, one version above the module's own.
func TestFoldOldMarks(t *testing.T) {
	providerRecord := func(m *sim, p string) (ChannelHealth, bool) {
		for _, h := range m.s.Health() {
			if h.Channel == (Channel{p, "*"}) {
				return h, true
			}
		}
		return ChannelHealth{}, false
	}
	markPA := func(m *sim) { // a spent allowance on pa, as the running module marks it
		m.request("x", rA.Channel)
		m.quotaFail("x", "pa", "QUOTA", "")
	}
	for _, tc := range []struct {
		name      string
		setup     func(m *sim)
		mark      func(now int64) OldMark
		providers []string
		adopted   int
		until     func(now int64, before ChannelHealth) int64 // the record's openUntilMs after; 0: no mark
	}{
		{"a live mark becomes the provider's record", nil,
			func(now int64) OldMark { return OldMark{Provider: "pa", MarkedAtMs: now - 1000, UntilMs: now + 60_000} },
			[]string{"pa"}, 1, func(now int64, _ ChannelHealth) int64 { return now + 60_000 }},
		{"a lifted mark is not taken", nil,
			func(now int64) OldMark {
				return OldMark{Provider: "pb", MarkedAtMs: now - 1000, UntilMs: now + 60_000, Lifted: true, LiftedAtMs: now - 500}
			}, nil, 0, nil},
		{"one lifted before it was set again is taken", nil,
			func(now int64) OldMark {
				return OldMark{Provider: "pb", MarkedAtMs: now - 1000, UntilMs: now + 60_000, Lifted: true, LiftedAtMs: now - 5000}
			}, []string{"pb"}, 1, func(now int64, _ ChannelHealth) int64 { return now + 60_000 }},
		{"a lapsed mark is not taken", nil,
			func(now int64) OldMark {
				return OldMark{Provider: "pc", MarkedAtMs: now - 90_000, UntilMs: now - 30_000}
			},
			nil, 0, nil},
		{"a provider marked longer already is left alone", markPA,
			func(now int64) OldMark { return OldMark{Provider: "pa", MarkedAtMs: now - 1000, UntilMs: now + 10} },
			nil, 0, func(_ int64, before ChannelHealth) int64 { return before.OpenUntilMs }},
		{"a provider marked shorter takes the longer mark, one version up", markPA,
			func(now int64) OldMark {
				return OldMark{Provider: "pa", MarkedAtMs: now - 1000, UntilMs: now + 10_000_000}
			},
			[]string{"pa"}, 1, func(now int64, _ ChannelHealth) int64 { return now + 10_000_000 }},
		{"a name no record may carry is passed over", nil,
			func(now int64) OldMark { return OldMark{Provider: "", MarkedAtMs: now, UntilMs: now + 1} },
			nil, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, nil)
			if tc.setup != nil {
				tc.setup(m)
			}
			mk := tc.mark(m.now)
			before, _ := providerRecord(m, mk.Provider)
			adopted, providers := m.s.FoldOldMarks(m.now, []OldMark{mk})
			if adopted != tc.adopted || !slices.Equal(providers, tc.providers) {
				t.Fatalf("adopted %d of %v, want %d of %v", adopted, providers, tc.adopted, tc.providers)
			}
			after, ok := providerRecord(m, mk.Provider)
			if tc.until == nil {
				if ok && after.MarkedAtMs != 0 {
					t.Fatalf("no mark wanted, the record is %+v", after)
				}
				return
			}
			if want := tc.until(m.now, before); !ok || after.OpenUntilMs != want || after.MarkedAtMs == 0 {
				t.Fatalf("the record %+v (found %v), want marked until %d", after, ok, want)
			}
			if tc.adopted == 1 && after.Version != before.Version+1 {
				t.Fatalf("version %d, want one above the module's %d", after.Version, before.Version)
			}
		})
	}
}
