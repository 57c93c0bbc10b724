package testhost

import "github.com/tetratelabs/wazero/experimental"

// guestMemory backs an instance's linear memory, growing its capacity by
// doubling from a few MiB. wazero's default grows it by appending exactly
// the pages asked for, and a Go guest grows its heap a few pages at a time,
// so each instance copied its memory over and over as it grew: with the
// simulator's restarts (sixty instances growing to 6 MiB) that was 5 % of
// the bench-day's CPU. What the guest sees is the same: the memory's size
// is the pages it asked for, and new pages are zero (Go zeroes a new slice,
// and no guest writes beyond the size).
type guestMemory struct {
	buf []byte
	max uint64
}

// guestMemoryStart is the capacity an instance starts with: about what the
// policy module reaches (the bench-day's instances end at 6 MiB).
const guestMemoryStart = 8 << 20

var guestAllocator = experimental.MemoryAllocatorFunc(func(_, max uint64) experimental.LinearMemory {
	return &guestMemory{max: max}
})

// Reallocate sets the memory to size bytes, keeping what it holds.
func (m *guestMemory) Reallocate(size uint64) []byte {
	if size > m.max {
		return nil
	}
	if size <= uint64(cap(m.buf)) {
		m.buf = m.buf[:size]
		return m.buf
	}
	c := min(max(size, 2*uint64(cap(m.buf)), guestMemoryStart), m.max)
	b := make([]byte, size, c)
	copy(b, m.buf)
	m.buf = b
	return b
}

// Free lets the memory go.
func (m *guestMemory) Free() { m.buf = nil }
