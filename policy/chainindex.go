package policy

// chainIndex is the chain, indexed once at configure: each entry's breaker
// (nil until it has one), its provider, and until when the entry lets no
// request through (0: it does now), kept up to date by every breaker change
// (circuit.changed).
//
// Routing walks the chain in order, and a failover that finds nothing walks
// all of it. Asking each entry's breaker and provider breaker meant two
// pointer hops per entry into objects spread over the heap; with 10^4 agents
// between two decisions nothing of them is left in the cache, and at a
// hundred channels those misses were most of the slowest decisions (make
// bench: the 10^4 x 100 scale case). The due times sit in one slice.
type chainIndex struct {
	due  []int64
	circ []*circuit
	prov []*provider
	// window and usable are each entry's context window and the context it
	// takes (fit.go); 0 when unknown.
	window, usable []int64
}

func newChainIndex(n int) chainIndex {
	return chainIndex{due: make([]int64, n), circ: make([]*circuit, n), prov: make([]*provider, n),
		window: make([]int64, n), usable: make([]int64, n)}
}

// refresh recomputes entry i's due time: the later of its own breaker's
// (the end of its open time, or of its held probe slot's lease) and its
// provider's open time. A provider breaker holds no probe slot, so only its
// open time holds its channels back (State.routable).
func (x *chainIndex) refresh(i int) {
	var at int64
	if c := x.circ[i]; c != nil {
		at = c.ownDue()
	}
	if p := &x.prov[i].breaker; p.state == Open {
		at = max(at, p.openUntilMs)
	}
	x.due[i] = at
}

// walkDue is State.walkChain when no entry is skipped: each entry is then
// asked one thing, its due time, so the walk reads that one slice and
// nothing else. A failover that finds nothing walks the whole chain, and at
// a hundred channels this loop took the slowest failures (make bench, 10^4
// agents x 100 channels) from 6.06 to 5.52 µs p99 and requests from 2.37 to
// 2.05 µs, where each entry's questions asked one at a time cost ~5 ns.
func (x *chainIndex) walkDue(now int64, n, avoidAt, alsoAt int, reopen, reopenAvoid bool, at *int64) (found, nextAt int) {
	nextAt = -1
	for i, d := range x.due[:n] {
		if now >= d && i != avoidAt && i != alsoAt {
			return i, nextAt
		}
		if reopen && (reopenAvoid || i != avoidAt) {
			if t := max(now, d); *at < 0 || t < *at {
				nextAt, *at = i, t
			}
		}
	}
	return -1, nextAt
}

// routable is State.routable for entry i.
func (x *chainIndex) routable(now int64, i int) bool { return now >= x.due[i] }

// reopensAt is State.reopensAt for entry i.
func (x *chainIndex) reopensAt(now int64, i int) int64 { return max(now, x.due[i]) }
