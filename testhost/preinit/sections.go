package preinit

import (
	"bytes"
	"errors"
	"fmt"
)

// The binary format's section ids this package reads or writes.
const (
	secCustom    = 0
	secType      = 1
	secImport    = 2
	secFunction  = 3
	secMemory    = 5
	secGlobal    = 6
	secExport    = 7
	secCode      = 10
	secData      = 11
	secDataCount = 12
)

// section is one section of a module, its body as it stands in the binary.
type section struct {
	id   byte
	body []byte
}

var wasmHeader = []byte{0x00, 'a', 's', 'm', 0x01, 0x00, 0x00, 0x00}

// parseSections splits a module into its sections, in order.
func parseSections(b []byte) ([]section, error) {
	if !bytes.HasPrefix(b, wasmHeader) {
		return nil, errors.New("not a WebAssembly 1.0 binary")
	}
	r := &reader{b: b, p: len(wasmHeader)}
	var out []section
	for r.p < len(b) {
		id := r.byte()
		n := int(r.u32())
		if r.err != nil || r.p+n > len(b) {
			return nil, fmt.Errorf("section %d at %d: truncated", id, r.p)
		}
		out = append(out, section{id: id, body: b[r.p : r.p+n]})
		r.p += n
	}
	return out, r.err
}

// encodeSections writes a module back from its sections.
func encodeSections(secs []section) []byte {
	out := append([]byte(nil), wasmHeader...)
	for _, s := range secs {
		out = append(out, s.id)
		out = appendU32(out, uint32(len(s.body)))
		out = append(out, s.body...)
	}
	return out
}

// reader walks a section's body; the first error sticks.
type reader struct {
	b   []byte
	p   int
	err error
}

func (r *reader) byte() byte {
	if r.p >= len(r.b) {
		r.err = errors.New("unexpected end")
		return 0
	}
	c := r.b[r.p]
	r.p++
	return c
}

func (r *reader) u32() uint32 {
	var v uint32
	for shift := 0; shift < 35; shift += 7 {
		c := r.byte()
		v |= uint32(c&0x7f) << shift
		if c&0x80 == 0 {
			return v
		}
	}
	r.err = errors.New("LEB128 too long")
	return 0
}

// bytes returns the next n bytes of the body.
func (r *reader) bytes(n int) []byte {
	if r.p+n > len(r.b) {
		r.err = errors.New("unexpected end")
		return nil
	}
	s := r.b[r.p : r.p+n]
	r.p += n
	return s
}

// name skips a length-prefixed name and returns it.
func (r *reader) name() string { return string(r.bytes(int(r.u32()))) }

// constExpr skips a constant expression (the globals' and segments' initial values).
func (r *reader) constExpr() {
	for r.err == nil {
		switch op := r.byte(); op {
		case 0x0b: // end
			return
		case 0x41, 0x42, 0x23, 0xd2: // i32.const, i64.const, global.get, ref.func: one LEB
			r.sleb()
		case 0x43:
			r.bytes(4)
		case 0x44:
			r.bytes(8)
		case 0xd0: // ref.null t
			r.byte()
		default:
			r.err = fmt.Errorf("constant expression opcode 0x%x", op)
		}
	}
}

func (r *reader) sleb() {
	for r.err == nil && r.byte()&0x80 != 0 {
	}
}

func appendU32(b []byte, v uint32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendS64(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

func appendName(b []byte, s string) []byte {
	return append(appendU32(b, uint32(len(s))), s...)
}
