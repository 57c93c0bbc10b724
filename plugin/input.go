package main

import "encoding/binary"

// The call's input, read into one buffer reused by every call. go-pdk's
// Input allocates a fresh slice per call; in a single-threaded guest every
// allocated byte brings the next collection nearer, and a collection's
// marking is paid by the call that meets it (see paceGC). The codec copies
// what it keeps (the JSON parser takes its own copy of the document), so
// nothing outlives the call in this buffer.

//go:wasmimport extism:host/env input_length
func extismInputLength() uint64

//go:wasmimport extism:host/env input_load_u8
func extismInputLoadU8(offset uint64) uint32

//go:wasmimport extism:host/env input_load_u64
func extismInputLoadU64(offset uint64) uint64

var inputBuf []byte

// input returns the call's Extism input, valid until the next call.
func input() []byte {
	n := int(extismInputLength())
	if cap(inputBuf) < n {
		inputBuf = make([]byte, n, n+n/2)
	}
	b := inputBuf[:n]
	i := 0
	for ; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], extismInputLoadU64(uint64(i)))
	}
	for ; i < n; i++ {
		b[i] = byte(extismInputLoadU8(uint64(i)))
	}
	return b
}
