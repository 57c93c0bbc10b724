package report

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const t0 = "2026-12-01T00:00:0"

// line is an audit line at second s (0-9) of the test's minute.
func line(s int, rest string) []byte {
	return []byte(fmt.Sprintf(`{"at":"%s%dZ",%s}`, t0, s, rest))
}

func TestUnusableRecordsAreSkippedAndCounted(t *testing.T) {
	long := `"pad":"` + strings.Repeat("x", MaxLineBytes) + `"`
	rows := []struct {
		name    string
		line    []byte
		skipped bool
	}{
		{"not JSON", []byte(`not json`), true},
		{"null", []byte(`null`), true},
		{"an array", []byte(`[1,2]`), true},
		{"no time", []byte(`{"type":"boot"}`), true},
		{"a time that is no time", []byte(`{"at":"yesterday","type":"boot"}`), true},
		{"a number for a type", []byte(`{"at":"2026-12-01T00:00:00Z","type":7}`), true},
		{"a torn line", []byte(`{"at":"2026-12-01T00:02`), true},
		{"a line over the bound", line(1, `"type":"boot",`+long), true},
		{"nested past the bound", line(1, `"type":"boot","x":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)), true},
		{"a restore whose channels hold null", line(1, `"type":"input","export":"restore","health":{"channels":[null,{"channel":{"provider":"p","model":"a"},"state":"open"}]}`), true},
		{"a restore whose channels is no list", line(1, `"type":"input","export":"restore","health":{"channels":{"0":1}}`), true},
		{"a restore whose channel is a number", line(1, `"type":"input","export":"restore","health":{"channels":[{"channel":7,"state":"open"}]}`), true},
		{"a failover without from", line(1, `"type":"failover","agent":"s","to":{"provider":"q","model":"b"}`), true},
		{"a failover from a channel without model", line(1, `"type":"failover","from":{"provider":"p"}`), true},
		{"a stream check without channel", line(1, `"type":"input","export":"decide","event":{"kind":"stream-check","openedMs":1,"chunks":0}`), true},
		{"a stream check without its open time", line(1, `"type":"input","export":"decide","event":{"kind":"stream-check","channel":{"provider":"p","model":"a"}}`), true},
		{"a request error whose failure is a string", line(1, `"type":"input","export":"decide","event":{"kind":"request-error","agent":"s","provider":"p","failure":"RATE_LIMIT"}`), true},
		{"a request without agent", line(1, `"type":"input","export":"decide","event":{"kind":"request"}`), true},
		{"a breaker without channel", line(1, `"type":"circuit-open","cause":"SERVER"`), true},
		{"a breaker whose cause is a number", line(1, `"type":"circuit-open","channel":{"provider":"p","model":"a"},"cause":503`), true},
		{"a probe whose ok is a string", line(1, `"type":"probe-result","channel":{"provider":"p","model":"a"},"ok":"yes"`), true},
		{"a stall without route", line(1, `"type":"stall","bound":"idle"`), true},

		{"a type the report does not read", line(1, `"type":"boot","pid":1`), false},
		{"a type no version wrote", line(1, `"type":"from-the-future","x":[1]`), false},
		{"an event kind the report does not read", line(1, `"type":"input","export":"decide","event":{"kind":"wake"}`), false},
		{"a restore without health", line(1, `"type":"input","export":"restore"`), false},
		{"a restore of closed channels only", line(1, `"type":"input","export":"restore","health":{"channels":[{"channel":{"provider":"p","model":"a"},"state":"closed"}]}`), false},
		{"a breaker named by its text", line(1, `"type":"circuit-open","channel":"p/a","cause":"SERVER"`), false},
		{"a time with an offset and no fraction", []byte(`{"at":"2026-12-01T08:00:00+08:00","type":"boot"}`), false},
	}
	for _, row := range rows {
		a := New(Window{}, 1)
		require.NoError(t, a.Feed(0, [][]byte{row.line}, true), row.name)
		rep := a.Finish()
		want := [2]int{1, 0}
		if row.skipped {
			want = [2]int{0, 1}
		}
		require.Equal(t, want, [2]int{rep.Records, rep.Skipped}, row.name)
	}
}

// The log of the issue: every kind of unusable record among good ones; the
// report goes on, counting them.
func TestAReportSurvivesItsUnusableRecords(t *testing.T) {
	lines := [][]byte{
		line(0, `"type":"circuit-open","channel":{"provider":"p","model":"a"},"cause":"SERVER","class":"transient"`),
		line(1, `"type":"input","export":"restore","health":{"channels":[null,{"channel":{"provider":"q","model":"b"},"state":"open"}]}`),
		line(2, `"type":"failover","agent":"s","to":{"provider":"q","model":"b"}`),
		line(3, `"type":"input","export":"decide","event":{"kind":"stream-check","openedMs":1,"chunks":0}`),
		[]byte(`{{{ not json`),
		[]byte(``),
		line(5, `"type":"circuit-closed","channel":{"provider":"p","model":"a"},"cause":"recovered"`),
	}
	a := New(Window{}, 1)
	require.NoError(t, a.Feed(0, lines, true))
	rep := a.Finish()
	require.Equal(t, 2, rep.Records)
	require.Equal(t, 4, rep.Skipped, "the blank line is nothing, not a skipped record")
	require.Len(t, rep.Incidents, 1)
	require.Equal(t, "p/a", rep.Incidents[0].Channel)
	require.Equal(t, int64(5000), rep.Incidents[0].DurationMs)
}

func TestStockOutcome(t *testing.T) {
	require.Equal(t, int64(500+1000+2000+4000+8000), stockBackoffMs())
	rows := []struct {
		name       string
		code       string
		hung       bool
		retryAfter opt[float64]
		retries    int
		budgetMs   int64
		why        string
	}{
		{"a rate limit is retried 5 times over 15.5 s", "RATE_LIMIT", false, opt[float64]{}, 5, 15_500, ""},
		{"QUOTA is not retried", "QUOTA", false, opt[float64]{}, 0, 0, "QUOTA is not retried"},
		{"a Retry-After over its cap ends the turn", "RATE_LIMIT", false, some(60_000.0), 0, 0, "Retry-After above its 10 s cap"},
		{"a Retry-After within it does not", "RATE_LIMIT", false, some(10_000.0), 5, 15_500, ""},
		{"a hung stream costs the idle timeout per attempt", "TIMEOUT", true, opt[float64]{}, 5, 15_500 + 6*300_000, "each attempt hangs for the 300 s idle timeout"},
	}
	for _, row := range rows {
		got := stockOutcome(row.code, row.hung, row.retryAfter)
		why := ""
		if got.Why != nil {
			why = *got.Why
		}
		require.Equal(t, []any{row.retries, row.budgetMs, why}, []any{got.Retries, got.BudgetMs, why}, row.name)
	}
}

// The names in the order the JavaScript report listed them (node's
// localeCompare, en).
func TestChannelsInReadingOrder(t *testing.T) {
	want := []string{"a", "a b", "a_b", "a-b", "a.b", "a1", "ab", "aB", "Ab", "deepseek-official/?", "deepseek-official/*", "deepseek-official/deepseek-v4-flash", "p/*", "p/a", "p/a2", "q/b"}
	got := []string{"q/b", "p/a2", "deepseek-official/deepseek-v4-flash", "Ab", "p/*", "aB", "ab", "a1", "deepseek-official/*", "a.b", "a-b", "p/a", "a_b", "a b", "deepseek-official/?", "a"}
	for i := range got {
		for j := i + 1; j < len(got); j++ {
			if byName(got[j], got[i]) < 0 {
				got[i], got[j] = got[j], got[i]
			}
		}
	}
	require.Equal(t, want, got)
}

// The merge pulls: it asks for the log whose queue ran dry, so each log's
// queue holds at most one batch however far apart the logs lie in time.
func TestMergePullsTheLogItNeeds(t *testing.T) {
	early := [][]byte{line(0, `"type":"boot"`), line(1, `"type":"boot"`), line(2, `"type":"boot"`), line(3, `"type":"boot"`)}
	late := [][]byte{line(7, `"type":"boot"`), line(8, `"type":"boot"`)}
	a := New(Window{}, 2)
	var asked []int
	next := []int{0, 0}
	logs := [][][]byte{late, early}
	for {
		log, ok := a.Need()
		if !ok {
			break
		}
		asked = append(asked, log)
		batch := logs[log][next[log]:min(len(logs[log]), next[log]+2)]
		next[log] += len(batch)
		require.NoError(t, a.Feed(log, batch, next[log] == len(logs[log])))
		for i := range a.queues {
			require.LessOrEqual(t, len(a.queues[i].recs)-a.queues[i].head, 2, "a queue holds one batch at most")
		}
	}
	require.Equal(t, []int{0, 1, 1}, asked)
	rep := a.Finish()
	require.Equal(t, 6, rep.Records)
	require.Equal(t, int64(1796083200000), rep.FromMs)
	require.Equal(t, int64(1796083208000), rep.ToMs)
	require.ErrorIs(t, a.Feed(2, nil, true), ErrLog)
}

// A log far beyond every bound keeps the report's memory flat: sessions
// never disposed, streams by the hundred thousand.
func TestMemoryStaysBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("a large log")
	}
	a := New(Window{}, 1)
	const n = 200_000
	batch := make([][]byte, 0, 2000)
	for i := range n {
		ms := 1796083200000 + int64(i)*10
		at := fmt.Sprintf(`"at":"2026-12-01T%02d:%02d:%02d.%03dZ"`, i/360000, i/6000%60, i/100%60, i%100*10)
		agent := fmt.Sprintf("s%d", i)
		batch = append(batch,
			[]byte(fmt.Sprintf(`{%s,"type":"input","export":"decide","event":{"kind":"request","agent":%q,"proposed":{"provider":"p","model":"a"}}}`, at, agent)),
			[]byte(fmt.Sprintf(`{%s,"type":"input","export":"decide","event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":%d,"chunks":1,"lastChunkMs":%d}}`, at, ms, ms+int64(i%1000))))
		if len(batch) == cap(batch) || i == n-1 {
			require.NoError(t, a.Feed(0, batch, i == n-1))
			batch = batch[:0]
		}
	}
	require.LessOrEqual(t, len(a.agents), maxAgents)
	rep := a.Finish()
	require.Equal(t, 2*n, rep.Records)
	c := rep.Channels[0]
	require.Equal(t, n, c.Requests)
	require.LessOrEqual(t, len(a.channels["p/a"].ttft.xs), maxSamples)
	require.InDelta(t, n, c.TTFTCount, n/100, "a sample's count is scaled back")
	require.InDelta(t, 500, *c.TTFTP50Ms, 10, "the sample's median is the log's")
	b, err := json.Marshal(rep)
	require.NoError(t, err)
	require.Less(t, len(b), 10_000)
}

// A request sent before the module was up (cold-pass) that failed before
// it came up has no stream check: its failure counts it, so the count is
// the provider's. One whose stream was checked once the module came up is
// that stream, claimed from when it went (sentAt; the records are written
// when the module was told), and counted once. A failure of a request that
// was not sent cold keeps the JavaScript report's count (the goldens): its
// stream was watched or needed no watch.
func TestAColdRequestIsCountedOnce(t *testing.T) {
	request := func(at, agent string) []byte {
		return []byte(fmt.Sprintf(`{"at":"2026-12-01T00:00:%s","type":"input","export":"decide","event":{"kind":"request","agent":%q,"proposed":{"provider":"p","model":"a"}}}`, at, agent))
	}
	cold := func(at, sent, agent string) []byte {
		return []byte(fmt.Sprintf(`{"at":"2026-12-01T00:00:%s","type":"cold-pass","agent":%q,"channel":{"provider":"p","model":"a"},"sentAt":"2026-12-01T00:00:%s"}`, at, agent, sent))
	}
	failed := func(at, agent string) []byte {
		return []byte(fmt.Sprintf(`{"at":"2026-12-01T00:00:%s","type":"input","export":"decide","event":{"kind":"request-error","agent":%q,"provider":"p","failure":{"code":"RATE_LIMIT"}}}`, at, agent))
	}
	const opened = 1796083201050 // 00:00:01.050, a little after s2's request went
	lines := [][]byte{
		// s1: sent cold at 01, failed before the bring-up at 02; told at 03.
		request("03Z", "s1"), cold("03Z", "01Z", "s1"), failed("03Z", "s1"),
		// s2: sent cold at 01, its stream checked once the module was up at 03, failed at 04.
		request("03Z", "s2"), cold("03Z", "01Z", "s2"),
		[]byte(fmt.Sprintf(`{"at":"2026-12-01T00:00:03Z","type":"input","export":"decide","event":{"kind":"stream-check","channel":{"provider":"p","model":"a"},"openedMs":%d,"chunks":0,"agent":"s2"}}`, opened)),
		failed("04Z", "s2"),
		// s3: not sent cold, no stream check: counted as the JavaScript report did.
		request("05Z", "s3"), failed("05Z", "s3"),
	}
	a := New(Window{}, 1)
	require.NoError(t, a.Feed(0, lines, true))
	c := a.Finish().Channels[0]
	require.Equal(t, "p/a", c.Channel)
	require.Equal(t, 2, c.Requests, "s1 at its failure, s2 by its stream; s3 as before")
	require.Equal(t, 3, c.Failures)
}
