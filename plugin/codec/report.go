package codec

import (
	"errors"
	"math"
	"strconv"

	"github.com/dsh-resilience/dsh-resilience/policy/report"
	"github.com/tidwall/gjson"
)

// The report on the wire (wit/policy.wit, `report-begin`, `report-feed`,
// `report-end`): the shim reads the audit logs and hands their lines over in
// batches; the module folds them (policy/report) and answers the numbers.
// A report keeps its state in the instance between the calls, beside the
// policy's and apart from it: the shim runs a report on an instance of its
// own, and a report begun anew replaces one left unfinished.

const reportState = "report"

// maxReportLogs bounds the logs one report merges: hosts, not files.
const maxReportLogs = 1024

// reportTimeMs bounds a window's times: JavaScript's dates (±10^8 days).
const reportTimeMs = 8.64e15

func init() {
	register("report-begin", (*Module).reportBegin)
	register("report-feed", (*Module).reportFeed)
	register("report-end", (*Module).reportEnd)
}

// errNoReport is answered by report-feed and report-end with no report begun.
var errNoReport = errors.New("no report begun: call report-begin first")

func (m *Module) reportBegin(input []byte) ([]byte, error) {
	v, err := parse(input)
	if err != nil {
		return nil, err
	}
	d := decoder{prefix: "input"}
	d.object(v, "", "fromMs", "toMs", "logs")
	var w report.Window
	w.FromMs, w.HasFrom = d.timeMs(v.Get("fromMs"), "fromMs")
	w.ToMs, w.HasTo = d.timeMs(v.Get("toMs"), "toMs")
	logs, ok := d.uint(v.Get("logs"), "logs", false, maxReportLogs)
	if !ok {
		logs = 1
	}
	if d.err == nil && logs == 0 {
		d.fail("logs", "must be at least 1")
	}
	if d.err != nil {
		return nil, d.err
	}
	if m.extra == nil {
		m.extra = map[string]any{}
	}
	m.extra[reportState] = report.New(w, int(logs))
	var out writer
	out.beginObject("")
	out.int("maxLineBytes", report.MaxLineBytes)
	out.endObject()
	return out.b, nil
}

func (m *Module) reportFeed(input []byte) ([]byte, error) {
	acc, _ := m.extra[reportState].(*report.Accumulator)
	if acc == nil {
		return nil, errNoReport
	}
	log, end, lines, ok := feedBatch(input) // feedbatch.go: the shim's own form, read in one pass
	if !ok {
		var err error
		if log, end, lines, err = readFeed(input); err != nil {
			return nil, err
		}
	}
	if err := acc.Feed(int(log), lines, end); err != nil {
		return nil, err
	}
	records, skipped := acc.Counts()
	var out writer
	out.beginObject("")
	out.int("records", int64(records))
	out.int("skipped", int64(skipped))
	if need, ok := acc.Need(); ok {
		out.int("need", int64(need))
	}
	out.endObject()
	return out.b, nil
}

// readFeed is report-feed's general reader: any JSON form, refused naming the field.
func readFeed(input []byte) (log int64, end bool, lines [][]byte, err error) {
	v, err := parse(input)
	if err != nil {
		return 0, false, nil, err
	}
	d := decoder{prefix: "input"}
	d.object(v, "", "log", "lines", "end")
	n, _ := d.uint(v.Get("log"), "log", true, maxReportLogs)
	end = d.boolean(v.Get("end"), "end")
	for i, l := range d.array(v.Get("lines"), "lines", true) {
		if l.Type != gjson.String {
			d.fail("lines["+strconv.Itoa(i)+"]", "must be a string")
			break
		}
		lines = append(lines, []byte(l.Str))
	}
	return int64(n), end, lines, d.err
}

func (m *Module) reportEnd([]byte) ([]byte, error) {
	acc, _ := m.extra[reportState].(*report.Accumulator)
	if acc == nil {
		return nil, errNoReport
	}
	delete(m.extra, reportState) // the memory goes with it
	var w writer
	writeReport(&w, acc.Finish())
	return w.b, nil
}

// timeMs reads a time in ms, before the epoch too.
func (d *decoder) timeMs(v gjson.Result, path string) (int64, bool) {
	if !present(v) {
		return 0, false
	}
	if v.Type != gjson.Number || v.Num != math.Trunc(v.Num) || math.Abs(v.Num) > reportTimeMs {
		d.fail(path, "must be a time in ms (an integer within ±%g)", reportTimeMs)
		return 0, false
	}
	return v.Int(), true
}
