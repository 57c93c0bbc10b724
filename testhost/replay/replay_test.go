package replay

import (
	"bytes"
	"context"
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
	f, err := os.Open(filepath.Join("..", "testdata", "dead-primary-audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	inputs, err := Read(f)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rt, err := sim.Runtime(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close(ctx)
	const chain = `"chain":[{"provider":"deepseek-official","model":"deepseek-v4-flash"},{"provider":"mock","model":"mock-b"}]`
	rep, err := Run(ctx, rt, inputs, []byte(`{`+chain+`,"failureThreshold":1}`))
	if err != nil {
		t.Fatal(err)
	}
	// (Replayed on today's module, A's own decisions may drift from the
	// recording's if the policy changes; what B changes is what is pinned.)
	if rep.B.Failovers != 1 || rep.B.Wasted != 1 || rep.B.Skipped != 2 || rep.A.Wasted != 3 || len(rep.Earlier) != 1 || !strings.Contains(rep.Earlier[0], "earlier than A") {
		var b bytes.Buffer
		rep.Print(&b, "B")
		t.Fatalf("unexpected replay:\n%s", b.String())
	}
	// The recorded config on both sides differs nowhere.
	same, err := Run(ctx, rt, inputs, []byte(`{`+chain+`}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Diffs) != 0 {
		t.Errorf("the recorded config replays with differences: %+v", same.Diffs)
	}
}
