package codec

import (
	"math"

	"github.com/dsh-resilience/dsh-resilience/policy"
	"github.com/tidwall/gjson"
)

func init() { register("fold-marks", (*Module).FoldMarks) }

// maxOldMarks bounds the providers an old marks file may name, as restore
// bounds a health batch.
const maxOldMarks = 10_000

// FoldMarks folds an old quota-marks.json, as its text, into health
// (policy/oldmarks.go). A file that does not parse, or an entry that is no
// mark, takes nothing and is no error: the answer says why.
func (m *Module) FoldMarks(input []byte) ([]byte, error) {
	v, d, err := m.configuredInput(input, "input")
	if err != nil {
		return nil, err
	}
	d.object(v, "", "nowMs", "text")
	now, _ := d.uint(v.Get("nowMs"), "nowMs", true, maxMs)
	text := d.str(v.Get("text"), "text", true)
	if d.err != nil {
		return nil, d.err
	}
	marks, problem := readOldMarks(text)
	adopted, providers := 0, []string(nil)
	if problem == "" {
		adopted, providers = m.state.FoldOldMarks(int64(now), marks)
	}
	var w writer
	w.beginObject("")
	w.int("adopted", int64(adopted))
	w.strings("providers", providers)
	if problem != "" {
		w.str("problem", problem)
	}
	w.endObject()
	return w.b, nil
}

// readOldMarks reads the file's `marks`: an entry without whole times is
// passed over, as the old version passed it over.
func readOldMarks(text string) ([]policy.OldMark, string) {
	if tooDeep([]byte(text), maxDepth) || !gjson.Valid(text) {
		return nil, "did not parse: not JSON, or nested too deep"
	}
	var out []policy.OldMark
	gjson.Get(text, "marks").ForEach(func(k, e gjson.Result) bool {
		at, okAt := wholeMs(e.Get("markedAtMs"))
		until, okUntil := wholeMs(e.Get("untilMs"))
		if k.Str == "" || !okAt || !okUntil {
			return true
		}
		lifted, okLifted := wholeMs(e.Get("liftedAtMs"))
		out = append(out, policy.OldMark{Provider: k.Str, MarkedAtMs: at, UntilMs: until, Lifted: okLifted, LiftedAtMs: lifted})
		return len(out) < maxOldMarks
	})
	return out, ""
}

// wholeMs is a JSON number that is a whole time in milliseconds.
func wholeMs(v gjson.Result) (int64, bool) {
	if v.Type != gjson.Number || v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > maxMs {
		return 0, false
	}
	return int64(v.Num), true
}
