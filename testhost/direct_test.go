package testhost

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The direct path (plugin/direct.go) and the Extism kernel's answer every
// call alike, byte for byte and error for error: two instances, one on each,
// in lockstep over the random stream the differential test uses (every
// export, malformed documents, errors before configure), the empty input
// and an output-less answer among them.
func TestDirectPathAnswersAsTheKernel(t *testing.T) {
	direct, kernel := newInstance(t), newInstance(t)
	kernel.Kernel = true
	require.NotNil(t, direct.dIn, "the module has the direct path's exports")
	g := newEventGen(7)
	for i := range 5000 {
		export, input := "decide", []byte(request(g.now, "early", chA)) // before configure: an error
		switch {
		case i == 1:
			export, input = "configure", []byte(g.config())
		case i == 2:
			export, input = "decide", nil
		case i > 2:
			export, input, _ = g.next()
		}
		d, k := wasmAnswer(t, direct, export, input), wasmAnswer(t, kernel, export, input)
		requireSame(t, i, export, input, d, k)
	}
}
