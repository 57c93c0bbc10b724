package policy

import "testing"

func TestBackoff(t *testing.T) {
	const top = randRange - 1 // the largest draw
	tests := []struct {
		name                  string
		attempt               int
		base, max, retryAfter int64
		rand                  uint64
		want                  int64
	}{
		{"lowest draw is zero", 1, 1000, 30000, 0, 0, 0},
		{"highest draw on attempt 1 is the base", 1, 1000, 30000, 0, top, 1000},
		{"attempt 3 ceiling is base*4", 3, 1000, 30000, 0, top, 4000},
		{"the cap holds", 10, 1000, 30000, 0, top, 30000},
		{"huge attempts stay at the cap", 500, 1000, 30000, 0, top, 30000},
		{"half draw is half the ceiling", 2, 1000, 30000, 0, randRange / 2, 1000},
		{"retry-after is a floor for a low draw", 1, 1000, 30000, 5000, 0, 5000},
		{"retry-after above the cap is honoured", 1, 1000, 30000, 60000, top, 60000},
		{"a draw above retry-after wins", 4, 1000, 30000, 100, top, 8000},
		{"attempt 0 counts as 1", 0, 1000, 30000, 0, top, 1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Backoff(tt.attempt, tt.base, tt.max, tt.retryAfter, tt.rand); got != tt.want {
				t.Errorf("Backoff(%d, %d, %d, %d, %d) = %d, want %d", tt.attempt, tt.base, tt.max, tt.retryAfter, tt.rand, got, tt.want)
			}
		})
	}
}

// Full jitter stays in [retryAfter or 0, ceiling] for every draw and attempt.
func TestBackoffBounds(t *testing.T) {
	r := uint64(0x9E3779B97F4A7C15)
	for attempt := 1; attempt <= 40; attempt++ {
		ceiling := int64(250) << min(attempt-1, 40)
		if ceiling > 20000 {
			ceiling = 20000
		}
		for i := 0; i < 200; i++ {
			r ^= r << 13
			r ^= r >> 7
			r ^= r << 17
			ra := int64(r % 3 * 7000)
			d := Backoff(attempt, 250, 20000, ra, r)
			lo := ra
			hi := max(ceiling, ra)
			if d < lo || d > hi {
				t.Fatalf("attempt %d draw %d retryAfter %d: %d outside [%d, %d]", attempt, r, ra, d, lo, hi)
			}
		}
	}
}
