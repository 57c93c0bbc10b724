// Package jsondepth bounds how deeply a JSON text nests before anything
// parses it. JSON validation and decoding recurse per level, and a text of
// 10^5 nested brackets overflowed the wasm guest's stack and trapped the
// module instead of being refused; counted first, iteratively, such input
// is an ordinary refusal (the codec's input) or a skipped record (the
// report's lines).
package jsondepth

import "bytes"

var open, openArray = []byte{'{'}, []byte{'['}

// TooDeep reports whether the JSON text nests deeper than max. It only
// counts brackets outside strings; validity is the parser's job afterwards.
func TooDeep(b []byte, max int) bool {
	// Depth never exceeds the number of opening brackets, and counting them
	// is a tight loop where the scan below is a branchy one: every decision
	// pays this, and in the guest it was a tenth of a request's decoding.
	if bytes.Count(b, open) <= max-bytes.Count(b, openArray) {
		return false
	}
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
