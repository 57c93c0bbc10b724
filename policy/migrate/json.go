package migrate

import (
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JSON is v as JSON.stringify writes it. The notes and refusals quote values
// this way, and the shim compared and printed them as JS text before this
// package took over: the same text keeps the printout the same.
func (v Value) JSON() string {
	var b strings.Builder
	v.write(&b)
	return b.String()
}

func (v Value) write(b *strings.Builder) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Number:
		b.WriteString(jsonNumber(v.Num))
	case String:
		writeString(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i, e := range v.Arr {
			if i > 0 {
				b.WriteByte(',')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Obj {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.Key)
			b.WriteByte(':')
			m.Val.write(b)
		}
		b.WriteByte('}')
	}
}

// writeString quotes s as JSON.stringify does: the short escapes where JSON
// has them, \u00XX for other control characters, everything else as is.
func writeString(b *strings.Builder, s string) {
	const hex = "0123456789abcdef"
	b.WriteByte('"')
	for i, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				b.WriteString(`\u00`)
				b.WriteByte(hex[r>>4])
				b.WriteByte(hex[r&0xf])
			} else if r == utf8.RuneError && !strings.HasPrefix(s[i:], "\uFFFD") {
				b.WriteString(`\ufffd`) // a byte that is not UTF-8: the text stays valid JSON
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// jsonNumber is a number as JSON.stringify writes it: NaN and the infinities
// have no JSON form and are null.
func jsonNumber(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "null"
	}
	return jsNumber(f)
}

// jsNumber is a finite number as JS writes it (Number.prototype.toString):
// the shortest digits that read back the same, in plain notation from 1e-7
// up to 1e21 and in exponent notation ("1e+21", "1.5e-7") outside.
func jsNumber(f float64) string {
	if f == 0 {
		return "0" // -0 too
	}
	sign := ""
	if f < 0 {
		sign, f = "-", -f
	}
	// d.ddde±x: the digits and where the point goes.
	e := strconv.FormatFloat(f, 'e', -1, 64)
	at := strings.IndexByte(e, 'e')
	digits := strings.Replace(e[:at], ".", "", 1)
	exp, _ := strconv.Atoi(e[at+1:])
	k, n := len(digits), exp+1
	switch {
	case k <= n && n <= 21:
		return sign + digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return sign + digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return sign + "0." + strings.Repeat("0", -n) + digits
	}
	mant := digits[:1]
	if k > 1 {
		mant += "." + digits[1:]
	}
	x := n - 1
	if x >= 0 {
		return sign + mant + "e+" + strconv.Itoa(x)
	}
	return sign + mant + "e-" + strconv.Itoa(-x)
}

// isWhole reports whether f is a finite whole number.
func isWhole(f float64) bool {
	return !math.IsInf(f, 0) && !math.IsNaN(f) && f == math.Trunc(f)
}
