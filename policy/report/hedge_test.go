package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Hedges are counted in the totals: every race, those the hedge won, and
// the time those saved; absent from the JSON when there were none.
func TestHedgesCounted(t *testing.T) {
	hedge := func(s int, winner, extra string) []byte {
		return line(s, `"type":"hedge","agent":"s","from":{"provider":"p","model":"a"},"to":{"provider":"q","model":"b"},"afterMs":2000,"winner":"`+winner+`"`+extra)
	}
	a := New(Window{}, 1)
	require.NoError(t, a.Feed(0, [][]byte{
		hedge(1, "hedge", `,"savedMs":15000`),
		hedge(2, "hedge", ``), // the primary never measured: no saving claimed
		hedge(3, "primary", ``),
		hedge(4, "none", `,"end":"hedge-failed"`),
		line(5, `"type":"hedge","winner":"hedge"`), // no channels: skipped
	}, true))
	rep := a.Finish()
	require.Equal(t, [3]int64{4, 2, 15000}, [3]int64{int64(rep.Totals.Hedges), int64(rep.Totals.HedgesWon), rep.Totals.HedgeSavedMs})
	require.Equal(t, 1, rep.Skipped)

	b, err := json.Marshal(New(Window{}, 1).Finish())
	require.NoError(t, err)
	require.False(t, strings.Contains(string(b), "hedge"), "no hedge fields without hedges: %s", b)
}
