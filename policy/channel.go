package policy

import "strings"

// Channel is one model route: a provider (the host's route id) and a model under it.
// Breakers and failover work per channel, because one provider often serves a
// healthy model beside a rate-limited or retired one.
//
// A Channel is its own identity: maps are keyed by the struct, persisted
// health and effects carry both fields apart. A joined "provider/model" text
// would be ambiguous, since either part may hold a "/" (vendor-prefixed model
// names are common): {a/b, c} and {a, b/c} are two channels.
type Channel struct {
	Provider string
	Model    string
}

// String renders the channel for people: "provider/model". It is display
// only, never an identity (see Channel).
func (c Channel) String() string { return c.Provider + "/" + c.Model }

// IsZero reports whether no channel is named.
func (c Channel) IsZero() bool { return c.Provider == "" && c.Model == "" }

// compare orders channels by provider, then model: the order of Health and of
// simultaneous probes, so map order never leaks into the output.
func (c Channel) compare(o Channel) int {
	if n := strings.Compare(c.Provider, o.Provider); n != 0 {
		return n
	}
	return strings.Compare(c.Model, o.Model)
}

// clone copies the names out of whatever they were sliced from (a decoded
// input document), so a channel the state keeps does not keep the document.
func (c Channel) clone() Channel { return Channel{strings.Clone(c.Provider), strings.Clone(c.Model)} }
