package report

import "bytes"

// tooDeep reports whether the JSON text nests deeper than max: counted
// first, iteratively, so a line of 10^5 brackets is skipped instead of
// overflowing the guest's stack in validation (the codec guards its input
// the same way: plugin/codec/depth.go). It only counts brackets outside
// strings; validity is gjson's job afterwards.
func tooDeep(b []byte, max int) bool {
	if bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) <= max {
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
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
