package codec

import (
	"encoding/json"
	"math"
	"strconv"
	"testing"
	"unicode/utf8"
)

// referenceString is the encoder's string before its fast paths (a whole
// string with nothing to escape, the rest of a valid UTF-8 string in one
// look): a rune at a time. The fast paths must write exactly what it wrote.
func referenceString(s string) string {
	const hex = "0123456789abcdef"
	b := []byte{'"'}
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b = append(b, '\\', c)
		case c < 0x20:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf:
			b = append(b, c)
		default:
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				b = append(b, `\ufffd`...)
			} else {
				b = append(b, s[i:i+n]...)
			}
			i += n
			continue
		}
		i++
	}
	return string(append(b, '"'))
}

var stringCases = []string{
	"", "plain", `a"b`, `back\slash`, "line\nbreak", "\x00\x1f\x7f",
	"代理商-α", "🙂-mini", "子代理-138", `您的配额已用尽 "quoted"`, "é\n",
	"valid é then bad \xff", "bad \xff then valid é", "\xed\xa0\x80 surrogate", "cut \xe4\xbb",
	"trailing \xc3", "\xf4\x90\x80\x80 beyond U+10FFFF",
}

func TestAppendStringAsReference(t *testing.T) {
	for _, s := range stringCases {
		got := string(appendString(nil, s))
		if want := referenceString(s); got != want {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
		if !json.Valid([]byte(got)) {
			t.Errorf("%q: %s is not JSON", s, got)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(appendString(nil, s)), referenceString(s); got != want {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}

func TestAppendIntAsStrconv(t *testing.T) {
	for _, n := range []int64{0, 1, -1, 9, 10, -10, 1234, 1777629603120, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		if got, want := string(appendInt([]byte("x"), n)), "x"+strconv.FormatInt(n, 10); got != want {
			t.Errorf("%d: got %s, want %s", n, got, want)
		}
	}
}
