package policy

import "container/heap"

// wakeIndex keeps every breaker that has something due in a min-heap by that
// time, so the next wake is read off the top instead of recomputed over every
// breaker on every step, and a wake visits only the breakers that are due.
//
// A channel breaker (filed only when probes are on) is due when it next lets
// a request through: the later of its own time (the end of its open time, or
// of its probe slot's lease; nothing while its slot is free) and its
// provider's open time, the same notion of "routable again" that routing uses
// (State.routable), so a wake never finds nothing to do and asks to be woken
// again at once. A provider breaker is due at the end of its open time, probes
// or not: the wake moves it to half-open then, so its open time ends when it
// says and not at the next request that happens to touch the provider (which,
// for a provider every agent now avoids, can be hours later). Every change of
// a breaker re-files it (circuit.changed).
//
// Each entry carries its due time, so ordering the heap reads the heap's own
// slice rather than every breaker it compares (objects spread over the heap,
// cold in the cache at 10^4 agents).
type wakeIndex []wakeEntry

type wakeEntry struct {
	dueMs int64
	c     *circuit
}

func (w wakeIndex) Len() int { return len(w) }
func (w wakeIndex) Less(i, j int) bool {
	if w[i].dueMs != w[j].dueMs {
		return w[i].dueMs < w[j].dueMs
	}
	return w[i].c.channel.compare(w[j].c.channel) < 0
}
func (w wakeIndex) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].c.heapAt, w[j].c.heapAt = i, j
}
func (w *wakeIndex) Push(x any) {
	c := x.(*circuit)
	c.heapAt = len(*w)
	*w = append(*w, wakeEntry{c.dueMs, c})
}
func (w *wakeIndex) Pop() any {
	old := *w
	c := old[len(old)-1].c
	old[len(old)-1] = wakeEntry{}
	*w = old[:len(old)-1]
	c.heapAt = -1
	return c
}

// file puts a breaker where its state says: at its due time, or out of the
// index when nothing about it is due. A breaker already filed at its time
// stays put.
func (w *wakeIndex) file(c *circuit) {
	due, ok := c.due()
	if !ok {
		if c.heapAt >= 0 {
			heap.Remove(w, c.heapAt)
		}
		return
	}
	if c.heapAt >= 0 && c.dueMs == due {
		return
	}
	c.dueMs = due
	if c.heapAt >= 0 {
		(*w)[c.heapAt].dueMs = due
		heap.Fix(w, c.heapAt)
	} else {
		heap.Push(w, c)
	}
}

// due is when the breaker next needs a wake, and false when it needs none: a
// closed breaker, or a provider breaker that is not open.
func (c *circuit) due() (int64, bool) {
	switch {
	case c.state == Closed:
		return 0, false
	case c.isProvider():
		return c.openUntilMs, c.state == Open
	}
	at := c.ownDue()
	if p := c.parent; p != nil && p.state == Open {
		at = max(at, p.openUntilMs)
	}
	return at, true
}

// next is the earliest due time, and false when no breaker is open.
func (w wakeIndex) next() (int64, bool) {
	if len(w) == 0 {
		return 0, false
	}
	return w[0].dueMs, true
}

// popDue removes and appends to buf every breaker due at now, in due order.
func (w *wakeIndex) popDue(now int64, buf []*circuit) []*circuit {
	for len(*w) > 0 && (*w)[0].dueMs <= now {
		buf = append(buf, heap.Pop(w).(*circuit))
	}
	return buf
}
