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

// The real host's dead-primary run (e2e/replay.test.mjs recorded it),
// replayed under maxFailovers 0: the one failover becomes a give-up.
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
	rep, err := Run(ctx, rt, inputs, []byte(`{"chain":[{"provider":"deepseek-official","model":"deepseek-v4-flash"},{"provider":"mock","model":"mock-b"}],"maxFailovers":0}`))
	if err != nil {
		t.Fatal(err)
	}
	// (The log was recorded on an earlier module; replayed on today's, A's own
	// decisions may differ from the recording's, so only what B changes is pinned.)
	if len(rep.Diffs) == 0 || rep.A.Failovers == 0 || rep.B.Failovers != 0 || rep.B.GiveUps["budget-exhausted"] == 0 {
		var b bytes.Buffer
		rep.Print(&b, "B")
		t.Fatalf("unexpected replay:\n%s", b.String())
	}
	if !strings.Contains(rep.Diffs[len(rep.Diffs)-1].A, "failover to mock/mock-b") {
		t.Errorf("A: %s", rep.Diffs[0].A)
	}
	// The same config on both sides differs nowhere.
	same, err := Run(ctx, rt, inputs, []byte(`{"chain":[{"provider":"deepseek-official","model":"deepseek-v4-flash"},{"provider":"mock","model":"mock-b"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(same.Diffs) != 0 {
		t.Errorf("the recorded config replays with differences: %+v", same.Diffs)
	}
}
