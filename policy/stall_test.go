package policy

import (
	"errors"
	"reflect"
	"testing"
)

var route = Channel{"deepseek-official", "deepseek-v4-flash"}

// stallState is a fresh state whose stall limits are set by mutate.
func stallState(t *testing.T, mutate func(*StallConfig)) *State {
	t.Helper()
	cfg := DefaultConfig()
	if mutate != nil {
		mutate(&cfg.Stall)
	}
	s, err := NewState(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// opened is a call that opened at 1000 and has had chunks chunks, the last at last.
func opened(purpose string, chunks, last int64) StreamCheck {
	return StreamCheck{Channel: route, Purpose: purpose, OpenedMs: 1000, Chunks: chunks, LastChunkMs: last}
}

func TestStallLimits(t *testing.T) {
	tight := func(c *StallConfig) {
		c.StallLimits = StallLimits{FirstChunkMs: 5000, IdleMs: 2000}
		c.Compaction = StallLimits{FirstChunkMs: 60_000, IdleMs: 10_000}
		c.SessionTitle = StallLimits{FirstChunkMs: 0, IdleMs: 3000}
	}
	off := func(c *StallConfig) { c.StallLimits = StallLimits{} }
	tests := []struct {
		name   string
		cfg    func(*StallConfig)
		now    int64
		check  StreamCheck
		want   Verdict
		effect *Stalled
	}{
		// The first-chunk bound runs from the call's start.
		{"opened: watch until the first-chunk deadline", tight, 1000, opened("", 0, 0),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 6000}}, nil},
		{"one ms before the first-chunk deadline", tight, 5999, opened("", 0, 0),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 6000}}, nil},
		{"at the first-chunk deadline: cut", tight, 6000, opened("", 0, 0),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 5.0 s since the request was sent (dsh-resilience stall.firstChunkMs is 5000)"}},
			&Stalled{Channel: route, Bound: FirstChunk, SilenceMs: 5000, LimitMs: 5000}},
		{"a late wake reports the silence it measured", tight, 97_400, opened("", 0, 0),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 96 s since the request was sent (dsh-resilience stall.firstChunkMs is 5000)"}},
			&Stalled{Channel: route, Bound: FirstChunk, SilenceMs: 96_400, LimitMs: 5000}},

		// After a chunk the idle bound runs from the last one, whatever the call's age.
		{"first chunk: the idle bound replaces the first-chunk bound", tight, 5500, opened("", 1, 5500),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 7500}}, nil},
		{"a slow answer is not a stall: old call, recent chunk", tight, 1_000_000, opened("", 900, 999_000),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 1_001_000}}, nil},
		{"silence after chunks: cut on the idle bound", tight, 9000, opened("", 1, 7000),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 2.0 s after 1 chunk (dsh-resilience stall.idleMs is 2000)"}},
			&Stalled{Channel: route, Bound: Idle, SilenceMs: 2000, LimitMs: 2000, Chunks: 1}},
		{"chunk count in the message", tight, 12_345, opened("", 42, 10_000),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 2.3 s after 42 chunks (dsh-resilience stall.idleMs is 2000)"}},
			&Stalled{Channel: route, Bound: Idle, SilenceMs: 2345, LimitMs: 2000, Chunks: 42}},
		{"a clock that went backwards is no silence", tight, 500, opened("", 3, 800),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 2800}}, nil},

		// Each purpose has its own limits; unknown purposes take the loop's.
		{"compaction: its own first-chunk bound", tight, 6000, opened(PurposeCompaction, 0, 0),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 61_000}}, nil},
		{"compaction: its own idle bound, and key in the message", tight, 20_000, opened(PurposeCompaction, 7, 10_000),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 10 s after 7 chunks (dsh-resilience stall.purposes.compaction.idleMs is 10000)"}},
			&Stalled{Channel: route, Purpose: PurposeCompaction, Bound: Idle, SilenceMs: 10_000, LimitMs: 10_000, Chunks: 7}},
		{"session title: first chunk unbounded, watched for the idle bound", tight, 1_000_000, opened(PurposeSessionTitle, 0, 0),
			Verdict{Kind: Watch}, nil},
		{"session title: idle bound after its first chunk", tight, 4000, opened(PurposeSessionTitle, 1, 1000),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 3.0 s after 1 chunk (dsh-resilience stall.purposes.sessionTitle.idleMs is 3000)"}},
			&Stalled{Channel: route, Purpose: PurposeSessionTitle, Bound: Idle, SilenceMs: 3000, LimitMs: 3000, Chunks: 1}},
		{"a purpose this version does not know takes the loop's limits", tight, 6000, opened("summary", 0, 0),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 5.0 s since the request was sent (dsh-resilience stall.firstChunkMs is 5000)"}},
			&Stalled{Channel: route, Purpose: "summary", Bound: FirstChunk, SilenceMs: 5000, LimitMs: 5000}},

		// Disabled bounds, and the caller's own abort.
		{"both bounds off: nothing to watch", off, 1 << 40, opened("", 0, 0), Verdict{Kind: Pass}, nil},
		{"both bounds off, after chunks", off, 1 << 40, opened("", 5, 2000), Verdict{Kind: Pass}, nil},
		{"idle off: after the first chunk, stop watching", func(c *StallConfig) { c.IdleMs = 0 }, 1 << 40, opened("", 1, 2000),
			Verdict{Kind: Pass}, nil},
		{"cancelled by the caller: never a stall", tight, 1 << 40, StreamCheck{Channel: route, OpenedMs: 1000, Cancelled: true},
			Verdict{Kind: Pass}, nil},

		// The defaults.
		{"defaults: three minutes for the first chunk", nil, 1000, opened("", 0, 0),
			Verdict{Kind: Watch, Stall: StallVerdict{AtMs: 181_000}}, nil},
		{"defaults: ninety seconds between chunks", nil, 91_000, opened("", 3, 1000),
			Verdict{Kind: Cut, Stall: StallVerdict{Code: "TIMEOUT",
				Message: "no output for 90 s after 3 chunks (dsh-resilience stall.idleMs is 90000)"}},
			&Stalled{Channel: route, Bound: Idle, SilenceMs: 90_000, LimitMs: 90_000, Chunks: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Step(stallState(t, tt.cfg), tt.now, tt.check)
			if out.Verdict != tt.want {
				t.Errorf("verdict %+v, want %+v", out.Verdict, tt.want)
			}
			var want []Effect
			if tt.effect != nil {
				want = []Effect{*tt.effect}
			}
			if !reflect.DeepEqual(out.Effects, want) {
				t.Errorf("effects %+v, want %+v", out.Effects, want)
			}
		})
	}
}

// A stream check reads the config only: it leaves no trace in the state, so
// calls that vanish without a last word cannot leak anything.
func TestStreamCheckLeavesNoState(t *testing.T) {
	s := stallState(t, nil)
	before := *s
	for now := int64(0); now < 400_000; now += 7_000 {
		Step(s, now, opened("", now/10_000, now))
		Step(s, now, opened(PurposeCompaction, 0, 0))
	}
	if s.agents.len() != 0 || len(s.circuits) != 0 || !reflect.DeepEqual(s.cfg, before.cfg) {
		t.Fatalf("stream checks changed the state: %d agents, %d circuits", s.agents.len(), len(s.circuits))
	}
}

func TestStallConfigValidateNamesTheKey(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*StallConfig)
		key    string
	}{
		{"first chunk below the floor", func(c *StallConfig) { c.FirstChunkMs = 99 }, "stall.firstChunkMs"},
		{"idle negative", func(c *StallConfig) { c.IdleMs = -1 }, "stall.idleMs"},
		{"idle above a day", func(c *StallConfig) { c.IdleMs = maxStallMs + 1 }, "stall.idleMs"},
		{"compaction first chunk", func(c *StallConfig) { c.Compaction.FirstChunkMs = 1 }, "stall.purposes.compaction.firstChunkMs"},
		{"session title idle", func(c *StallConfig) { c.SessionTitle.IdleMs = 50 }, "stall.purposes.sessionTitle.idleMs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c.Stall)
			var fe *FieldError
			if err := c.Validate(); !errors.As(err, &fe) || fe.Key != tt.key {
				t.Fatalf("Validate() = %v, want a FieldError for %s", err, tt.key)
			}
		})
	}
	for _, ok := range []StallLimits{{}, {minStallMs, maxStallMs}, {0, 1000}} {
		c := DefaultConfig()
		c.Stall = StallConfig{StallLimits: ok, Compaction: ok, SessionTitle: ok}
		if err := c.Validate(); err != nil {
			t.Errorf("%+v rejected: %v", ok, err)
		}
	}
}

func TestSeconds(t *testing.T) {
	for ms, want := range map[int64]string{
		0: "0.0 s", 49: "0.0 s", 50: "0.1 s", 1500: "1.5 s", 9_949: "9.9 s", 9_950: "10 s",
		90_000: "90 s", 90_499: "90 s", 90_500: "91 s", 300_000: "300 s",
	} {
		if got := seconds(ms); got != want {
			t.Errorf("seconds(%d) = %q, want %q", ms, got, want)
		}
	}
}
