package policy

import "testing"

// {a/b, c} and {a, b/c} are two channels: opening one leaves the other alone.
// Joined as "provider/model" they were one key, and the second was skipped.
func TestSlashedNamesAreDistinctChannels(t *testing.T) {
	x, y, z := Channel{"a/b", "c"}, Channel{"a", "b/c"}, Channel{"q", "z"}
	m := newSim(t, func(c *Config) { c.Chain = []Channel{x, y, z} })
	m.request("a1", x)
	out := m.step(RequestError{Agent: "a1", Provider: "a/b", Failure: Failure{Code: "QUOTA"}, Phase: BeforeHost})
	expect(t, out, Retry, "circuit:closed>open", "failover:a/b/c")
	if fo := out.Effects[1].(FailedOver); fo.To != y {
		t.Fatalf("failed over to %+v, want %+v", fo.To, y)
	}
	if h := m.s.Health(); len(h) != 1 || h[0].Channel != x {
		t.Fatalf("health %+v, want only %+v", h, x)
	}
}
