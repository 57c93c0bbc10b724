package codec

import "bytes"

var open, openArray = []byte{'{'}, []byte{'['}

// maxDepth bounds how deeply an input may nest. The deepest valid input (a
// config's stall.purposes.compaction.idleMs, a step's event.failure) nests
// five levels; JSON validation and decoding recurse per level, and a file of
// 10^5 nested brackets overflowed the guest's stack and trapped the module
// instead of being refused. Counting first, iteratively, makes such input an
// ordinary error.
const maxDepth = 32

// tooDeep reports whether the JSON text nests deeper than max. It only counts
// brackets outside strings; validity is gjson's job afterwards.
func tooDeep(b []byte, max int) bool {
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
