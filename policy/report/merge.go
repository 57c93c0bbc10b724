package report

import (
	"errors"
	"fmt"
	"slices"
)

// Several hosts' logs are one story, told in the order things happened: a
// breaker one host opened and another closed is one outage. So records are
// folded in time order across the logs (ties: the lower log first, then the
// line order), as a k-way merge of the logs' lines.
//
// The merge pulls: after each batch, Need names the log whose lines it
// needs next (the first whose queue ran dry), and the caller reads on in
// that log only. A record is folded once every log still being read has one
// waiting, the earliest first. Each log's queue then holds at most one batch,
// so the memory is the batches', whatever the logs' sizes or how far apart
// in time they lie. Pushing all lines in (the caller sorting) would need the
// caller to read every record's time, and a module that sorted everything it
// was given would hold the whole log.
//
// Within a log, lines are in the order they were written, which is their
// time order but for a few milliseconds where two processes append to one
// file; each batch is put in time order (stable) before it queues, so such a
// pair is folded in time order too unless a batch boundary falls between them.

// queue is one log's records read but not yet folded.
type queue struct {
	recs  []record
	head  int
	ended bool
}

func (q *queue) empty() bool { return q.head == len(q.recs) }

// ErrLog is returned for a batch of a log the report does not have.
var ErrLog = errors.New("no such log")

// Feed reads a batch of one log's lines and folds every record the merge
// can release. end says the log has no more lines after these.
func (a *Accumulator) Feed(log int, lines [][]byte, end bool) error {
	if log < 0 || log >= len(a.queues) {
		return fmt.Errorf("%w: %d of %d", ErrLog, log, len(a.queues))
	}
	q := &a.queues[log]
	if q.ended && len(lines) > 0 {
		return fmt.Errorf("log %d was ended", log)
	}
	if q.empty() { // reuse the drained queue's array
		q.recs, q.head = q.recs[:0], 0
	}
	from := len(q.recs)
	for _, line := range lines {
		r, blank, ok := readLine(line)
		switch {
		case blank:
		case !ok:
			a.skipped++
		default:
			q.recs = append(q.recs, r)
		}
	}
	batch := q.recs[from:]
	byTime := func(x, y record) int { return cmp64(x.t, y.t) }
	if !slices.IsSortedFunc(batch, byTime) {
		slices.SortStableFunc(batch, byTime)
	}
	if from > q.head && len(batch) > 0 && batch[0].t < q.recs[from-1].t {
		slices.SortStableFunc(q.recs[q.head:], byTime) // fed ahead of its turn: keep it one queue in time order
	}
	q.ended = q.ended || end
	a.release()
	return nil
}

// Need is the log whose lines the merge needs next; false once every log has ended.
func (a *Accumulator) Need() (int, bool) {
	for i := range a.queues {
		if q := &a.queues[i]; q.empty() && !q.ended {
			return i, true
		}
	}
	return 0, false
}

// release folds records in time order while every log still being read has
// one waiting (or, at the end, while any is left).
func (a *Accumulator) release() {
	for {
		next := -1
		for i := range a.queues {
			q := &a.queues[i]
			if q.empty() {
				if !q.ended {
					return // its next record may be earlier than any waiting
				}
				continue
			}
			if next < 0 || q.recs[q.head].t < a.queues[next].recs[a.queues[next].head].t {
				next = i
			}
		}
		if next < 0 {
			return
		}
		q := &a.queues[next]
		r := q.recs[q.head]
		q.recs[q.head] = record{} // hold nothing past its fold
		q.head++
		a.fold(next, &r)
	}
}

func cmp64(x, y int64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
