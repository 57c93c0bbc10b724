package codec

import "github.com/dsh-resilience/dsh-resilience/policy/jsondepth"

// maxDepth bounds how deeply an input may nest. The deepest valid input (a
// config's stall.purposes.compaction.idleMs, a step's event.failure) nests
// five levels; deeper input is refused before it is parsed (jsondepth).
const maxDepth = 32

func tooDeep(b []byte, max int) bool { return jsondepth.TooDeep(b, max) }
