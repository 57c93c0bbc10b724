package codec

import (
	"strconv"
	"unicode/utf8"
)

// writer builds JSON by appending: no reflection, so output is cheap in wasm
// and its key order is fixed, which the differential test relies on.
type writer struct {
	b     []byte
	first []bool // per open object/array: no member written yet
}

// reset empties the writer, keeping its buffers.
func (w *writer) reset() { w.b, w.first = w.b[:0], w.first[:0] }

func (w *writer) sep() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b = append(w.b, ',')
		}
		w.first[n-1] = false
	}
}

func (w *writer) open(c byte)  { w.b = append(w.b, c); w.first = append(w.first, true) }
func (w *writer) close(c byte) { w.b = append(w.b, c); w.first = w.first[:len(w.first)-1] }

// key writes `"k":` as the next member of the current object.
func (w *writer) key(k string) {
	w.sep()
	w.b = appendString(w.b, k)
	w.b = append(w.b, ':')
}

func (w *writer) beginObject(k string) {
	if k != "" {
		w.key(k)
	} else {
		w.sep()
	}
	w.open('{')
}
func (w *writer) endObject() { w.close('}') }

func (w *writer) beginArray(k string) {
	if k != "" {
		w.key(k)
	} else {
		w.sep()
	}
	w.open('[')
}
func (w *writer) endArray() { w.close(']') }

func (w *writer) str(k, v string)       { w.key(k); w.b = appendString(w.b, v) }
func (w *writer) int(k string, v int64) { w.key(k); w.b = strconv.AppendInt(w.b, v, 10) }

func (w *writer) boolean(k string, v bool) { w.key(k); w.b = strconv.AppendBool(w.b, v) }

// strings writes a list<string> member.
func (w *writer) strings(k string, vs []string) {
	w.beginArray(k)
	for _, v := range vs {
		w.sep()
		w.b = appendString(w.b, v)
	}
	w.endArray()
}

// appendString quotes s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// encoding/json does, so the output is always valid JSON.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	b = appendEscaped(b, s)
	return append(b, '"')
}

// appendEscaped appends s escaped as the inside of a JSON string: text the
// module holds (a string) or builds (an audit log line, bytes).
func appendEscaped[S ~string | ~[]byte](b []byte, s S) []byte {
	const hex = "0123456789abcdef"
	for i := 0; i < len(s); {
		// A run of bytes that need no escape goes in whole: keys and most
		// values are all such bytes, and appending them one at a time (a
		// capacity check each) was half of encoding a decision (native profile
		// of bench-day's calls).
		start := i
		for i < len(s) && s[i] >= 0x20 && s[i] < utf8.RuneSelf && s[i] != '"' && s[i] != '\\' {
			i++
		}
		b = append(b, s[start:i]...)
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		// At most utf8.UTFMax bytes converted: no allocation for bytes.
		r, n := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
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
