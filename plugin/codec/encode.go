package codec

import (
	"strconv"
	"unicode/utf8"
)

// writer builds JSON by appending: no reflection, so output is cheap in wasm
// and its key order is fixed, which the differential test relies on.
//
// In the wasm guest a Go call costs ~20 ns and a member was a handful of
// them, so a member is written by one call that inlines the rest, and each
// call stores w.b once: appending a string (`append(w.b, s...)`) or a
// helper's result stores the whole slice, its pointer through the
// collector's write barrier while a collection marks (much of the time at
// the eager pace, plugin/main.go). Counted with a wazero function listener
// over bench-day's calls (Dec 2026), barriers and the marking they fed were
// half the guest calls an audit record made when every part of a member
// stored w.b.
type writer struct {
	b     []byte
	first []bool // per open object/array: no member written yet
}

// memberKey is a member's name. Only a constant converts to it unasked, so
// every key is a name of the contract written in this package: it needs no
// escape, and goes in whole.
type memberKey string

// reset empties the writer, keeping its buffers.
func (w *writer) reset() { w.b, w.first = w.b[:0], w.first[:0] }

// sep appends a comma to b when the current object or array has a member.
func (w *writer) sep(b []byte) []byte {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			b = append(b, ',')
		}
		w.first[n-1] = false
	}
	return b
}

func (w *writer) open(c byte)  { w.b = append(w.b, c); w.first = append(w.first, true) }
func (w *writer) close(c byte) { w.b = append(w.b, c); w.first = w.first[:len(w.first)-1] }

// keyed appends `"k":` to b as the next member of the current object.
func (w *writer) keyed(b []byte, k memberKey) []byte {
	b = append(w.sep(b), '"')
	b = append(b, k...)
	return append(b, '"', ':')
}

// key writes `"k":` as the next member of the current object.
func (w *writer) key(k memberKey) { w.b = w.keyed(w.b, k) }

// item starts the next element of the current array.
func (w *writer) item() { w.b = w.sep(w.b) }

func (w *writer) beginObject(k memberKey) {
	if k != "" {
		w.key(k)
	} else {
		w.item()
	}
	w.open('{')
}
func (w *writer) endObject() { w.close('}') }

func (w *writer) beginArray(k memberKey) {
	if k != "" {
		w.key(k)
	} else {
		w.item()
	}
	w.open('[')
}
func (w *writer) endArray() { w.close(']') }

// str writes a string member: appendString spelled out, one call in all.
func (w *writer) str(k memberKey, v string) {
	b := append(w.keyed(w.b, k), '"')
	if i := plainLen(v); i < len(v) {
		b = appendEscaped(append(b, v[:i]...), v[i:])
	} else {
		b = append(b, v...)
	}
	w.b = append(b, '"')
}

func (w *writer) int(k memberKey, v int64)    { w.b = appendInt(w.keyed(w.b, k), v) }
func (w *writer) boolean(k memberKey, v bool) { w.b = strconv.AppendBool(w.keyed(w.b, k), v) }

// null writes an option member as null where absent will not do: the
// quotaRetry projection's documented format has the key (quotaprojection.go).
func (w *writer) null(k memberKey) { w.b = append(w.keyed(w.b, k), "null"...) }

// strings writes a list<string> member.
func (w *writer) strings(k memberKey, vs []string) {
	w.beginArray(k)
	for _, v := range vs {
		w.b = appendString(w.sep(w.b), v)
	}
	w.endArray()
}

// appendInt appends v in base 10, formatted on the stack: strconv.AppendInt
// is three calls deep.
func appendInt(b []byte, v int64) []byte {
	var d [20]byte
	i := len(d)
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	for u >= 10 {
		i--
		d[i] = byte('0' + u%10)
		u /= 10
	}
	i--
	d[i] = byte('0' + u)
	if v < 0 {
		i--
		d[i] = '-'
	}
	return append(b, d[i:]...)
}

// appendString quotes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does, so the output is always valid JSON. A string with
// nothing to escape (most are) goes in whole, without appendEscaped's call.
func appendString(b []byte, s string) []byte {
	return append(appendText(append(b, '"'), s), '"')
}

// appendText appends s escaped as the inside of a JSON string.
func appendText(b []byte, s string) []byte {
	if i := plainLen(s); i < len(s) {
		return appendEscaped(append(b, s[:i]...), s[i:])
	}
	return append(b, s...)
}

// plainLen is how many bytes s starts with that need no escape.
func plainLen(s string) int {
	i := 0
	for i < len(s) && plain[s[i]] {
		i++
	}
	return i
}

// plain marks the bytes a JSON string holds as they are: printable ASCII but
// the quote and the backslash. One load a byte instead of four comparisons
// halves the escaping of a string in wasm. plainUTF8 adds the bytes of
// multi-byte runes, for the rest of a string known to be valid UTF-8.
var plain, plainUTF8 = func() (t, u [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c < utf8.RuneSelf && c != '"' && c != '\\'
		u[c] = c >= utf8.RuneSelf || t[c]
	}
	return t, u
}()

// appendEscaped appends s escaped as the inside of a JSON string.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	t, checked := &plain, false
	for i := 0; i < len(s); {
		// A run of bytes that need no escape goes in whole: keys and most
		// values are all such bytes, and appending them one at a time (a
		// capacity check each) was half of encoding a decision (native profile
		// of bench-day's calls).
		start := i
		for i < len(s) && t[s[i]] {
			i++
		}
		b = append(b, s[start:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '"' || c == '\\' {
				b = append(b, '\\', c)
			} else { // a control byte
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			continue
		}
		// Names and messages in other scripts are common: one look at the
		// rest instead of a decode per rune (each a call in wasm).
		if !checked {
			checked = true
			if utf8.ValidString(s[i:]) {
				t = &plainUTF8
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, "\\ufffd"...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// AppendString appends s as a JSON string literal, exactly as the module
// encodes strings; hosts that build the module's inputs by hand (the
// simulator in testhost/sim) use it too.
func AppendString(b []byte, s string) []byte { return appendString(b, s) }
