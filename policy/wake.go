package policy

import "container/heap"

// wakeIndex keeps every breaker that is not closed in a min-heap by the time
// it next lets a request through (its due time), so the next wake is read off
// the top instead of recomputed over every breaker on every step, and a wake
// visits only the breakers that are due.
//
// A channel's due time is the later of its own (the end of its open time, or
// of its probe slot's lease; nothing while its slot is free) and its
// provider's open time: the same notion of "routable again" that routing uses
// (State.routable), so a wake never finds nothing to do and asks to be woken
// again at once. Every change of a breaker re-files it (circuit.changed).
type wakeIndex []*circuit

func (w wakeIndex) Len() int { return len(w) }
func (w wakeIndex) Less(i, j int) bool {
	if w[i].dueMs != w[j].dueMs {
		return w[i].dueMs < w[j].dueMs
	}
	return w[i].channel.compare(w[j].channel) < 0
}
func (w wakeIndex) Swap(i, j int) {
	w[i], w[j] = w[j], w[i]
	w[i].heapAt, w[j].heapAt = i, j
}
func (w *wakeIndex) Push(x any) {
	c := x.(*circuit)
	c.heapAt = len(*w)
	*w = append(*w, c)
}
func (w *wakeIndex) Pop() any {
	old := *w
	c := old[len(old)-1]
	old[len(old)-1] = nil
	*w = old[:len(old)-1]
	c.heapAt = -1
	return c
}

// file puts a channel breaker where its state says: out of the index when
// closed, else at its due time.
func (w *wakeIndex) file(c *circuit) {
	if c.state == Closed {
		if c.heapAt >= 0 {
			heap.Remove(w, c.heapAt)
		}
		return
	}
	c.dueMs = c.ownDue()
	if p := c.parent; p != nil && p.state == Open {
		c.dueMs = max(c.dueMs, p.openUntilMs)
	}
	if c.heapAt >= 0 {
		heap.Fix(w, c.heapAt)
	} else {
		heap.Push(w, c)
	}
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
