package codec

import (
	"bytes"
	"strings"
	"testing"
)

// Resolve answers what Configure would, and refuses what it would, naming the key.
func TestResolveAnswersAsConfigure(t *testing.T) {
	for _, tc := range []struct{ config, err string }{
		{config: `{"chain":[{"provider":"p","model":"a"},{"provider":"p","model":"b"}],"failureThreshold":2}`},
		{config: `{}`},
		{config: `{"persistent":true}`},
		{config: `{"maxFailovers":-1}`, err: `config key "maxFailovers"`},
		{config: `{"chain":[{"provider":"p"}]}`, err: `chain[0].model`},
		{config: `[`, err: `not valid JSON`},
	} {
		var m Module
		want, wantErr := m.Configure([]byte(tc.config))
		got, err := Resolve([]byte(tc.config))
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || wantErr == nil || err.Error() != wantErr.Error() {
				t.Errorf("%s: resolve %v, configure %v; want both to name %q", tc.config, err, wantErr, tc.err)
			}
			continue
		}
		if err != nil || wantErr != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: resolve %s (%v), configure %s (%v)", tc.config, got, err, want, wantErr)
		}
	}
}
