package policy

import "testing"

// A provider breaker opening names the model under it that went down last
// (CircuitChanged.TrippedBy): dsh-model-failover's platform circuit names the
// model whose opening tripped it, and the shim mirrors that event without
// remembering openings of its own (host-shim/compat-events.js).
func TestProviderOpeningNamesTheModelThatTrippedIt(t *testing.T) {
	other := Channel{"p", "z"}
	tests := []struct {
		name  string
		steps func(m *sim) Output
		want  string
	}{
		{"the second model down opens the provider: it is named", func(m *sim) Output {
			m.request("a1", chA)
			m.fail("a1", BeforeHost, "QUOTA", "", nil) // p/a opens
			m.advance(1_000)
			m.request("a1", chA) // on p/b
			return m.fail("a1", BeforeHost, "QUOTA", "", nil)
		}, "b"},
		{"a model that went down earlier and is still down is not the one named", func(m *sim) Output {
			m.request("a1", other)
			m.fail("a1", BeforeHost, "QUOTA", "", nil) // p/z opens
			m.advance(1_000)
			m.request("a2", chA)
			return m.fail("a2", BeforeHost, "QUOTA", "", nil) // p/a opens: the provider too
		}, "a"},
		{"a refused key opens its model and its provider: the model is named", func(m *sim) Output {
			m.request("a1", chA)
			return m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "AUTH", Status: 401, Message: "invalid api key"}, Phase: BeforeHost, HostRetry: stock})
		}, "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderThreshold = 2 })
			var got *CircuitChanged
			for _, fx := range tt.steps(m).Effects {
				if cc, ok := fx.(CircuitChanged); ok && cc.Channel == (Channel{"p", "*"}) && cc.To == Open {
					got = &cc
				} else if ok && cc.TrippedBy != "" {
					t.Errorf("a channel breaker's change names a model: %+v", cc)
				}
			}
			if got == nil {
				t.Fatal("the provider did not open")
			}
			if got.TrippedBy != tt.want {
				t.Errorf("TrippedBy %q, want %q", got.TrippedBy, tt.want)
			}
		})
	}
}

// Two models opening in the same millisecond, in either order: the one that
// opened last is named, whatever the order their breakers were made in.
func TestProviderOpeningNamesTheLastOpenedInTheSameMillisecond(t *testing.T) {
	for _, order := range [][2]Channel{{chA, chB}, {chB, chA}} {
		m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC}; c.ProviderThreshold = 2 })
		m.request("a1", order[0])
		m.fail("a1", BeforeHost, "QUOTA", "", nil)
		m.request("a2", order[1])
		named := "(the provider did not open)"
		for _, fx := range m.fail("a2", BeforeHost, "QUOTA", "", nil).Effects {
			if cc, ok := fx.(CircuitChanged); ok && cc.Channel == (Channel{"p", "*"}) && cc.To == Open {
				named = cc.TrippedBy
			}
		}
		if named != order[1].Model {
			t.Errorf("%s then %s: the provider names %q, want %q", order[0], order[1], named, order[1].Model)
		}
	}
}
