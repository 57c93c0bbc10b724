package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dsh-resilience/dsh-resilience/testhost/sim"
)

// The real host's dead-primary run (e2e/replay.test.mjs recorded it: three
// 429s, the host retrying twice, then the failover), replayed under
// failureThreshold 1: B fails over at the first failure, and two of the
// recorded failures happened on requests B had sent elsewhere.
func TestReplayDeadPrimary(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("..", "testdata", "dead-primary-audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	const chain = `"chain":[{"provider":"deepseek-official","model":"deepseek-v4-flash"},{"provider":"mock","model":"mock-b"}]`
	rep := replayLog(t, string(log), `{`+chain+`,"failureThreshold":1}`)
	// (Replayed on today's module, A's own decisions may drift from the
	// recording's if the policy changes; what B changes is what is pinned.
	// The recording predates spillAfter: today's module, under the recorded
	// config, spills at the second failure, so A wastes two requests, not three.)
	if rep.B.Failovers != 1 || rep.B.Wasted != 1 || rep.B.Skipped != 2 || rep.A.Wasted != 2 || len(rep.Earlier) != 1 || !strings.Contains(rep.Earlier[0], "earlier than A") {
		var b bytes.Buffer
		rep.Print(&b, "B")
		t.Fatalf("unexpected replay:\n%s", b.String())
	}
	// The recorded config on both sides differs nowhere.
	if same := replayLog(t, string(log), `{`+chain+`}`); len(same.Diffs) != 0 {
		t.Errorf("the recorded config replays with differences: %+v", same.Diffs)
	}
}

// A log as the shim writes it (engine.js inputRecord), one input record a line.
type logBuilder struct {
	b    strings.Builder
	last int64 // the latest time given: a rebuild happens then, as in the shim
}

func (l *logBuilder) line(format string, a ...any) *logBuilder {
	fmt.Fprintf(&l.b, format+"\n", a...)
	return l
}
func (l *logBuilder) configure(cfg string, rebuild bool) *logBuilder {
	if rebuild {
		return l.line(`{"type":"input","export":"configure","nowMs":%d,"config":%s,"rebuild":true}`, t0+l.last, cfg)
	}
	return l.line(`{"type":"input","export":"configure","config":%s}`, cfg)
}
func (l *logBuilder) decide(at int64, event string) *logBuilder {
	l.last = at
	return l.line(`{"type":"input","export":"decide","nowMs":%d,"event":%s}`, t0+at, event)
}
func (l *logBuilder) request(at int64, agent, provider, model string) *logBuilder {
	return l.decide(at, fmt.Sprintf(`{"kind":"request","agent":%q,"proposed":{"provider":%q,"model":%q}}`, agent, provider, model))
}
func (l *logBuilder) fail(at int64, agent, provider string) *logBuilder {
	return l.decide(at, fmt.Sprintf(`{"kind":"request-error","agent":%q,"provider":%q,"failure":{"code":"SERVER","status":500},"phase":"before-host","rand":0}`, agent, provider))
}
func (l *logBuilder) restore(at int64, channels string) *logBuilder {
	l.last = at
	return l.line(`{"type":"input","export":"restore","nowMs":%d,"health":{"channels":[%s]}}`, t0+at, channels)
}

const (
	t0     = int64(1_796_097_400_000)
	chainJ = `"chain":[{"provider":"p","model":"a"},{"provider":"q","model":"b"},{"provider":"r","model":"c"}]`
	c1     = `{` + chainJ + `,"failureThreshold":1,"probes":false}`
	c2     = `{` + chainJ + `,"failureThreshold":5,"probes":false}`
)

func replayLog(t *testing.T, log string, configB string) *Report {
	t.Helper()
	inputs, err := Read(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := sim.Runtime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	rep, err := Run(ctx, rt, inputs, []byte(configB))
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func diffAt(rep *Report, at int64) *Diff {
	for i := range rep.Diffs {
		if rep.Diffs[i].AtMs == t0+at {
			return &rep.Diffs[i]
		}
	}
	return nil
}

// Mid-log, a live reconfigure (the user edited the row: A takes the new
// config and the health the shim carried over; B keeps its config and its
// state) and a rebuild after a trap (each side starts again with its own
// config and its own health).
func TestReplayAcrossReconfigureAndRebuild(t *testing.T) {
	var l logBuilder
	l.configure(c1, false).
		request(1_000, "s1", "p", "a").fail(1_100, "s1", "p"). // threshold 1: p/a opens, s1 fails over
		configure(c2, false).
		restore(2_000, `{"channel":{"provider":"p","model":"a"},"state":"open","failures":1,"opens":1,"openUntilMs":`+fmt.Sprint(t0+61_100)+`,"lastCode":"SERVER","changedAtMs":`+fmt.Sprint(t0+1_100)+`}`).
		request(3_000, "s2", "p", "a"). // both still avoid p/a
		fail(3_100, "s2", "q").         // A (threshold 5) leaves it to the host; B (threshold 1) opens q/b
		configure(c2, true).            // a rebuild: each side with its own health
		request(62_000, "s3", "q", "b") // p/a's time is up, q/b's not: A passes q/b, B still avoids it
	rep := replayLog(t, l.b.String(), c1)
	if d := diffAt(rep, 3_000); d != nil {
		t.Errorf("after the reconfigure both sides know p/a open from the carried health: %+v", *d)
	}
	if d := diffAt(rep, 3_100); d == nil || !strings.HasPrefix(d.A, "defer") || !strings.Contains(d.B, "q/b closed->open") {
		t.Errorf("at the failure on q/b: %+v, want A (reconfigured to threshold 5) deferring and B (kept threshold 1) opening q/b", d)
	}
	if d := diffAt(rep, 62_000); d == nil || d.A != "pass" || !strings.HasPrefix(d.B, "swap to p/a") {
		t.Errorf("after the rebuild: %+v, want A passing q/b and B, whose health kept q/b open, swapping to p/a", d)
	}
	// The same log with B's config the one A ended with, from the start:
	// they part only at the first failure, where c1 and c2 differ.
	if rep := replayLog(t, l.b.String(), c2); len(rep.Diffs) == 0 || rep.Diffs[0].AtMs != t0+1_100 {
		t.Errorf("B on c2 throughout: diffs %+v, want the first at the first failure", rep.Diffs)
	}
}

// A restore recorded after decisions (shared health merged from another
// host) is both sides' news, even after a live reconfigure that carried no
// health (the shim records a restore only when it adopted something).
func TestReplayLateRestoreReachesBothSides(t *testing.T) {
	var l logBuilder
	l.configure(c1, false).
		request(1_000, "s1", "p", "a").
		configure(c1, false). // nothing to carry: no restore record
		request(2_000, "s2", "q", "b").
		restore(3_000, `{"channel":{"provider":"q","model":"b"},"state":"open","failures":1,"opens":1,"openUntilMs":`+fmt.Sprint(t0+63_000)+`,"lastCode":"SERVER","changedAtMs":`+fmt.Sprint(t0+3_000)+`}`).
		request(4_000, "s3", "q", "b")
	if rep := replayLog(t, l.b.String(), c1); len(rep.Diffs) != 0 {
		t.Errorf("the shared health reached one side only: %+v", rep.Diffs)
	}
}

// A log written before marks travelled in health holds restore-mark inputs:
// each is replayed as the provider record that carries the mark now, on both
// sides, so the old log still replays (an unknown event kind stopped it).
func TestReplayOldRestoreMark(t *testing.T) {
	var l logBuilder
	l.configure(c1, false).
		decide(1_000, `{"kind":"restore-mark","provider":"p","markedAtMs":`+fmt.Sprint(t0+500)+`,"untilMs":`+fmt.Sprint(t0+60_000)+`}`).
		request(2_000, "s1", "p", "a")
	rep := replayLog(t, l.b.String(), c1)
	if len(rep.Diffs) != 0 || rep.A.Decisions != 1 {
		t.Fatalf("diffs %+v, decisions %d", rep.Diffs, rep.A.Decisions)
	}
}

// A restore the shim recorded as news (`live`: a record published by another
// host, a refresh) is replayed as news: the module times an unseen open from
// the record's receipt, so a writer 10 min behind's trip holds both sides.
func TestReplayKeepsALiveRestoreLive(t *testing.T) {
	rec := `{"channel":{"provider":"q","model":"b"},"state":"open","failures":1,"opens":1,"openUntilMs":` + fmt.Sprint(t0+3_000-600_000+60_000) +
		`,"lastCode":"SERVER","changedAtMs":` + fmt.Sprint(t0+3_000-600_000) + `,"version":1}`
	log := fmt.Sprintf(`{"type":"input","export":"restore","nowMs":%d,"live":true,"health":{"channels":[%s]}}`, t0+3_000, rec)
	ins, err := Read(strings.NewReader(log))
	if err != nil || len(ins) != 1 || !ins[0].Live {
		t.Fatalf("the live flag was not read: %+v %v", ins, err)
	}
	got := string(liveInput(restoreInput(ins[0].Body, ins[0].NowMs), ins[0].Live))
	if want := fmt.Sprintf(`{"live":true,"nowMs":%d,"channels":[%s]}`, t0+3_000, rec); got != want {
		t.Fatalf("replayed as %s\nwant %s", got, want)
	}
	if got := string(liveInput([]byte(`{"nowMs":1,"channels":[]}`), false)); got != `{"nowMs":1,"channels":[]}` {
		t.Fatalf("a restore at start was marked live: %s", got)
	}
}
