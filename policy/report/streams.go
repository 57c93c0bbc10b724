package report

import "math"

// Watched streams (the stall watchdog's stream-check inputs): requests per
// channel, time to first token, and which channel a request error (which
// names only its provider) belongs to.
//
// A stream stays open to a later check (its first chunk) and to a later error
// (claiming it) while it is among the latest recentStreams of its host's
// channel and of its host's provider. Past both it can change no more, and
// its time to first token is folded into its channel's samples: no report
// keeps every stream.

type stream struct {
	key        string
	openedMs   float64
	firstChunk opt[float64]
	failed     bool
	lists      int8 // how many of its two recent lists still hold it
}

type streams struct {
	byChannel  map[hostKey][]*stream // a host's channel's latest streams, oldest first
	byProvider map[hostKey][]*stream // a host's provider's latest opened streams
}

func newStreams() streams {
	return streams{byChannel: map[hostKey][]*stream{}, byProvider: map[hostKey][]*stream{}}
}

func (a *Accumulator) streamCheck(log int, r *record) {
	key := r.channel.v
	ck := hostKey{log, key}
	mine := a.streams.byChannel[ck]
	var s *stream
	// Its checks carry the open time rounded afresh each time: a millisecond
	// either way is the same stream.
	for _, x := range mine {
		if math.Abs(x.openedMs-r.openedMs) <= 2 {
			s = x
			break
		}
	}
	if s == nil {
		// The channel's previous stream answered and no error claimed it: the
		// channel worked, so failures before it are no outage's onset.
		if n := len(mine); n > 0 && mine[n-1].firstChunk.ok && !mine[n-1].failed {
			delete(a.pending, key)
		}
		s = &stream{key: key, openedMs: r.openedMs, lists: 2}
		a.streams.byChannel[ck] = a.keepLatest(mine, s)
		pk := hostKey{log, r.provider}
		a.streams.byProvider[pk] = a.keepLatest(a.streams.byProvider[pk], s)
		a.channelOf(key).requests++
	}
	if r.chunks > 0 && !s.firstChunk.ok {
		s.firstChunk = r.lastChunkMs
	}
}

// keepLatest appends a stream to a recent list, letting the oldest go past
// recentStreams.
func (a *Accumulator) keepLatest(list []*stream, s *stream) []*stream {
	list = append(list, s)
	if len(list) > recentStreams {
		a.letGo(list[0])
		copy(list, list[1:])
		list[len(list)-1] = nil
		list = list[:len(list)-1]
	}
	return list
}

// letGo lets a stream go from one recent list; from both, it is final.
func (a *Accumulator) letGo(s *stream) {
	if s.lists--; s.lists == 0 {
		a.foldStream(s)
	}
}

// claim marks the first unclaimed stream of a host's provider opened in
// [from, to] as failed, and answers it.
func (st *streams) claim(log int, provider string, from, to float64) *stream {
	for _, x := range st.byProvider[hostKey{log, provider}] {
		if !x.failed && x.openedMs >= from && x.openedMs <= to {
			x.failed = true
			return x
		}
	}
	return nil
}

// foldStream takes a final stream's time to first token: answered streams
// only (an error's finish is a chunk too, but no token).
func (a *Accumulator) foldStream(s *stream) {
	if s.failed || !s.firstChunk.ok || !a.inWindow0(s.openedMs) {
		return
	}
	if c := a.channels[s.key]; c != nil {
		c.ttft.add(s.openedMs, max(0, s.firstChunk.v-s.openedMs))
	}
}

// inWindow0 is inWindow for a stream's (fractional) open time.
func (a *Accumulator) inWindow0(ms float64) bool {
	return (!a.window.HasFrom || ms >= float64(a.window.FromMs)) && (!a.window.HasTo || ms <= float64(a.window.ToMs))
}

// foldOpenStreams folds the streams still open to change, at the end.
func (a *Accumulator) foldOpenStreams() {
	for _, lists := range []map[hostKey][]*stream{a.streams.byChannel, a.streams.byProvider} {
		for _, list := range lists {
			for _, s := range list {
				if s.lists > 0 {
					s.lists = 0
					a.foldStream(s)
				}
			}
		}
	}
}

// samples are a channel's times to first token, with the open time each
// was measured at (the window is known only at the end when not given).
type samples struct {
	xs     []sample
	stride int // every stride-th is kept (1 until maxSamples is reached)
	n      int // seen
}

type sample struct{ openedMs, ttftMs float64 }

func (sm *samples) add(openedMs, ttftMs float64) {
	if sm.stride == 0 {
		sm.stride = 1
	}
	sm.n++
	if (sm.n-1)%sm.stride != 0 {
		return
	}
	sm.xs = append(sm.xs, sample{openedMs, ttftMs})
	if len(sm.xs) >= maxSamples {
		for i := 0; 2*i < len(sm.xs); i++ {
			sm.xs[i] = sm.xs[2*i]
		}
		sm.xs = sm.xs[:(len(sm.xs)+1)/2]
		sm.stride *= 2
	}
}
