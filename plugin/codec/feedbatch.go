package codec

import (
	"unicode/utf16"
	"unicode/utf8"
)

// feedBatch reads report-feed's input in the one form the shim writes it,
// {"log":N,"end":B,"lines":["…",…]} with no spaces (JSON.stringify), in one
// pass. The general reader (parse: a depth scan and a validity scan of the
// whole batch, then gjson, which unescapes each line into a string of its
// own) took most of a 10^5-line report's time in the guest, for an input
// whose shape leaves nothing to nest. Any other form, or anything in a line
// this reader does not take as plainly (a control byte, invalid UTF-8, a
// \u escape of a surrogate), says no, and the general reader answers it,
// naming the field when it refuses. The lines are copied out, into one
// buffer: the input's buffer is the next call's.
func feedBatch(in []byte) (log int64, end bool, lines [][]byte, ok bool) {
	p := feedParser{in: in}
	if !p.lit(`{"log":`) {
		return 0, false, nil, false
	}
	if log, ok = p.small(); !ok || log > maxReportLogs {
		return 0, false, nil, false
	}
	if !p.lit(`,"end":`) {
		return 0, false, nil, false
	}
	switch {
	case p.lit("true"):
		end = true
	case p.lit("false"):
	default:
		return 0, false, nil, false
	}
	if !p.lit(`,"lines":[`) {
		return 0, false, nil, false
	}
	buf := make([]byte, 0, len(in)-p.i)
	var spans [][2]int
	for first := true; ; first = false {
		if p.lit("]") {
			break
		}
		if !first && !p.lit(",") {
			return 0, false, nil, false
		}
		from := len(buf)
		if buf, ok = p.str(buf); !ok {
			return 0, false, nil, false
		}
		spans = append(spans, [2]int{from, len(buf)})
	}
	if !p.lit("}") || p.i != len(in) {
		return 0, false, nil, false
	}
	lines = make([][]byte, len(spans))
	for i, s := range spans {
		lines[i] = buf[s[0]:s[1]:s[1]]
	}
	return log, end, lines, true
}

type feedParser struct {
	in []byte
	i  int
}

// lit takes s if the input goes on with it.
func (p *feedParser) lit(s string) bool {
	if len(p.in)-p.i < len(s) || string(p.in[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// small takes a whole number of at most six digits, without a leading zero.
func (p *feedParser) small() (int64, bool) {
	n, digits := int64(0), 0
	for p.i < len(p.in) && p.in[p.i] >= '0' && p.in[p.i] <= '9' && digits < 7 {
		if digits == 1 && n == 0 {
			return 0, false
		}
		n = n*10 + int64(p.in[p.i]-'0')
		p.i++
		digits++
	}
	return n, digits > 0 && digits < 7
}

// str takes a JSON string, appending its text to buf.
func (p *feedParser) str(buf []byte) ([]byte, bool) {
	if !p.lit(`"`) {
		return buf, false
	}
	from := len(buf)
	for p.i < len(p.in) {
		c := p.in[p.i]
		switch {
		case c == '"':
			p.i++
			return buf, utf8.Valid(buf[from:])
		case c < 0x20:
			return buf, false
		case c != '\\':
			// A run of plain bytes at once.
			j := p.i
			for j < len(p.in) && p.in[j] != '"' && p.in[j] != '\\' && p.in[j] >= 0x20 {
				j++
			}
			buf = append(buf, p.in[p.i:j]...)
			p.i = j
		default:
			if p.i+1 >= len(p.in) {
				return buf, false
			}
			e := p.in[p.i+1]
			p.i += 2
			switch e {
			case '"', '\\', '/':
				buf = append(buf, e)
			case 'b':
				buf = append(buf, '\b')
			case 'f':
				buf = append(buf, '\f')
			case 'n':
				buf = append(buf, '\n')
			case 'r':
				buf = append(buf, '\r')
			case 't':
				buf = append(buf, '\t')
			case 'u':
				r, ok := p.hex4()
				if !ok || utf16.IsSurrogate(r) {
					return buf, false // a pair, or a lone half: the general reader's to read
				}
				buf = utf8.AppendRune(buf, r)
			default:
				return buf, false
			}
		}
	}
	return buf, false
}

func (p *feedParser) hex4() (rune, bool) {
	if len(p.in)-p.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p.in[p.i : p.i+4] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c - 'a' + 10)
		case c >= 'A' && c <= 'F':
			r |= rune(c - 'A' + 10)
		default:
			return 0, false
		}
	}
	p.i += 4
	return r, true
}
