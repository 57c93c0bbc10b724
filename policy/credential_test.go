package policy

import "testing"

// A wrong or revoked key is per provider (credential.go): the turn moves to
// another provider, never to a sibling model holding the same key.
func TestCredentialFailureFailsOverToAnotherProvider(t *testing.T) {
	tests := []struct {
		name    string
		chain   []Channel
		f       Failure
		verdict VerdictKind
		effects []string
	}{
		{"401 invalid key: past the sibling model to the other provider",
			[]Channel{chA, chB, chC}, Failure{Code: "AUTH", Status: 401, Message: "Authentication Fails, Your api key: ****abcd is invalid"},
			Retry, []string{"circuit:closed>open", "circuit:closed>open", "failover:q/c"}},
		{"the host's own INVALID_CREDENTIAL, lower case",
			[]Channel{chA, chB, chC}, Failure{Code: "invalid_credential", Message: "the API key is blank"},
			Retry, []string{"circuit:closed>open", "circuit:closed>open", "failover:q/c"}},
		{"403 forbidden", []Channel{chA, chC}, Failure{Code: "AUTH", Status: 403, Message: "forbidden"},
			Retry, []string{"circuit:closed>open", "circuit:closed>open", "failover:q/c"}},
		{"only the same provider left: handed back at once, waiting never fixes a key",
			[]Channel{chA, chB}, Failure{Code: "AUTH", Status: 401, Message: "invalid api key"},
			Delegate, []string{"circuit:closed>open", "circuit:closed>open", "give-up:not-recoverable"}},
		{"an AUTH that names a spent plan stays quota, one channel",
			[]Channel{chA, chB, chC}, Failure{Code: "AUTH", Status: 403, Message: "You have used up your 5-hour usage window"},
			Retry, []string{"circuit:closed>open", "failover:p/b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := newSim(t, func(c *Config) { c.Chain = tt.chain })
			m.request("a1", chA)
			out := m.step(RequestError{Agent: "a1", Provider: "p", Failure: tt.f, Phase: BeforeHost, HostRetry: stock})
			expect(t, out, tt.verdict, tt.effects...)
		})
	}
}

func TestCredentialFailureOpensTheProviderUntilItsOpenTimeIsUp(t *testing.T) {
	m := newSim(t, func(c *Config) { c.Chain = []Channel{chA, chB, chC} })
	m.request("a1", chA)
	m.step(RequestError{Agent: "a1", Provider: "p", Failure: Failure{Code: "AUTH", Status: 401, Message: "invalid api key"}, Phase: BeforeHost, HostRetry: stock})
	for _, ch := range []Channel{chA, chB} {
		if m.s.routable(m.now, ch) {
			t.Errorf("%s routable right after p's key was refused", ch)
		}
	}
	if !m.s.routable(m.now, chC) {
		t.Errorf("q/c, another provider, must stay routable")
	}
	// The next agent request goes to the other provider too.
	if v := m.request("a2", chA); v.Kind != Swap || v.Channel != chC {
		t.Errorf("a new request on p/a: %+v, want a swap to q/c", v)
	}
}
