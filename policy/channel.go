package policy

// Channel is one model route: a provider (the host's route id) and a model under it.
// Breakers and failover work per channel, because one provider often serves a
// healthy model beside a rate-limited or retired one.
type Channel struct {
	Provider string
	Model    string
}

// Key is the channel's identity in maps and persisted health: "provider/model".
func (c Channel) Key() string { return c.Provider + "/" + c.Model }

// String renders the channel for logs.
func (c Channel) String() string { return c.Key() }

// IsZero reports whether no channel is named.
func (c Channel) IsZero() bool { return c.Provider == "" && c.Model == "" }
