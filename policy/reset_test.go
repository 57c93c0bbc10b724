package policy

import "testing"

func TestResetHint(t *testing.T) {
	now := int64(1_893_456_000_000) // 2030-01-01 00:00:00 UTC
	tests := []struct {
		msg  string
		want int64
	}{
		{"You have reached your usage limit. Your quota resets at 2030-01-01 05:00:00 UTC.", 5 * 3_600_000},
		{"quota exceeded; reset at 2030-01-01T00:30:00Z", 30 * 60_000},
		{"limit reached, resets at 2030-01-01 08:00:00 +08:00", 0},         // 08:00 in UTC+8 is now: nothing to wait
		{"limit reached, resets at 2030-01-01 09:00:00 +08:00", 3_600_000}, // an hour on
		{"limit reached, resets at 2029-12-31 20:00:00 -0500", 3_600_000},
		{"resets at 2030-01-01 05:00:00 PST", 0},      // a zone without its offset: not trusted
		{"resets at 2030-01-01 05:00", 5 * 3_600_000}, // no seconds, no zone: UTC
		{"resets at 2029-12-31 23:00:00 UTC", 0},      // in the past
		{"resets at 2031-01-01 00:00:00 UTC", 0},      // beyond a week: not believed
		{"Rate limit reached for requests. Please try again in 20s.", 20_000},
		{"Please try again in 1h30m", 90 * 60_000},
		{"try again in 2 hours 5 minutes", (2*60 + 5) * 60_000},
		{"retry after 45 seconds", 45_000},
		{"已达到用量上限，请在5分钟后重试", 5 * 60_000},
		{"额度已用完，3小时后恢复", 3 * 3_600_000},
		{"Rate limit reached for requests", 0},
		{"try again later", 0},
		{"", 0},
		{"resets at 2030-13-01 00:00:00", 0}, // not a date
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			if got := resetHint(tt.msg, now); got != tt.want {
				t.Errorf("resetHint(%q) = %d, want %d", tt.msg, got, tt.want)
			}
		})
	}
}

func TestDaysFromCivil(t *testing.T) {
	for _, tt := range []struct{ y, m, d, want int64 }{
		{1970, 1, 1, 0}, {2000, 3, 1, 11017}, {2030, 1, 1, 21915}, {1969, 12, 31, -1}, {2024, 2, 29, 19782},
	} {
		if got := daysFromCivil(tt.y, tt.m, tt.d); got != tt.want {
			t.Errorf("daysFromCivil(%d-%d-%d) = %d, want %d", tt.y, tt.m, tt.d, got, tt.want)
		}
	}
}

// A spent cap that names its reset stays open until then, not for the cooldown.
func TestAResetTimeInTheWordingKeepsTheChannelOpenUntilThen(t *testing.T) {
	m := newSim(t, nil)
	m.now = 1_893_456_000_000
	m.request("a1", chA)
	out := m.fail("a1", BeforeHost, "RATE_LIMIT", "已达到 Token Plan 用量上限，请在2小时后重试", nil)
	if cc := out.Effects[0].(CircuitChanged); cc.OpenUntilMs != m.now+2*3_600_000 {
		t.Fatalf("open until %d, want now+2h", cc.OpenUntilMs-m.now)
	}
}

// Every wait a provider states is capped at a week, whatever it says.
func TestStatedWaitIsCapped(t *testing.T) {
	for _, ra := range []int64{week + 1, 1 << 50, 1<<53 - 1} {
		m := newSim(t, nil)
		m.request("a1", chA)
		out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "QUOTA", RetryAfterMs: ra}, Phase: BeforeHost})
		if cc := out.Effects[0].(CircuitChanged); cc.OpenUntilMs != m.now+week {
			t.Errorf("Retry-After %d: open until +%d, want a week", ra, cc.OpenUntilMs-m.now)
		}
	}
}
