package policy

import (
	"fmt"
	"sort"
)

// maxAgents bounds the per-agent table. Agents are normally forgotten on
// Disposed; the bound keeps a host that never says so from growing it forever.
const maxAgents = 4096

// State is everything the policy remembers. The caller owns it and passes it to
// every Step; only channel health is worth persisting (Health/Restore).
type State struct {
	cfg      Config
	circuits map[string]*circuit
	agents   map[string]*agent
}

// agent is what the policy needs to know of one agent between events.
type agent struct {
	last      Channel // the channel its latest request went to
	inFlight  bool    // that request has not failed (yet)
	failovers int     // failovers since its last success
	attempts  int     // same-channel retries since its last success or failover
	seen      int64   // last event time, for eviction
}

// NewState returns an empty state under a validated config.
func NewState(cfg Config) (*State, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &State{cfg: cfg, circuits: map[string]*circuit{}, agents: map[string]*agent{}}, nil
}

// Config returns the config the state runs under.
func (s *State) Config() Config { return s.cfg }

func (s *State) circuit(ch Channel) *circuit {
	c := s.circuits[ch.Key()]
	if c == nil {
		c = &circuit{channel: ch, state: Closed}
		s.circuits[ch.Key()] = c
	}
	return c
}

// peek reads a channel's breaker without creating one: an unseen channel is closed.
func (s *State) peek(ch Channel) *circuit {
	if c := s.circuits[ch.Key()]; c != nil {
		return c
	}
	return &circuit{channel: ch, state: Closed}
}

func (s *State) agent(id string, now int64) *agent {
	a := s.agents[id]
	if a == nil {
		if len(s.agents) >= maxAgents {
			s.evictOldest()
		}
		a = &agent{}
		s.agents[id] = a
	}
	a.seen = now
	return a
}

func (s *State) evictOldest() {
	oldest, at := "", int64(0)
	for id, a := range s.agents {
		if oldest == "" || a.seen < at || (a.seen == at && id < oldest) {
			oldest, at = id, a.seen
		}
	}
	delete(s.agents, oldest)
}

// ChannelHealth is one channel's persisted breaker.
type ChannelHealth struct {
	Channel     Channel
	State       CircuitState
	Failures    int
	OpenUntilMs int64
	LastCode    string
}

// Health lists every channel that has a breaker, sorted by key. A half-open
// probe in flight is recorded as open-and-due, so a restarted host probes again.
func (s *State) Health() []ChannelHealth {
	out := make([]ChannelHealth, 0, len(s.circuits))
	for _, c := range s.circuits {
		st := c.state
		if st == HalfOpen {
			st = Open
		}
		out = append(out, ChannelHealth{c.channel, st, c.failures, c.openUntilMs, c.lastCode})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Channel.Key() < out[j].Channel.Key() })
	return out
}

// Restore loads persisted health, replacing what the state had for those channels.
func (s *State) Restore(hs []ChannelHealth) error {
	for i, h := range hs {
		if h.Channel.Provider == "" || h.Channel.Model == "" {
			return &FieldError{fmt.Sprintf("channels[%d].channel", i), "needs provider and model"}
		}
		switch h.State {
		case Closed, Open, HalfOpen:
		default:
			return &FieldError{fmt.Sprintf("channels[%d].state", i), fmt.Sprintf("unknown circuit state %q", h.State)}
		}
		if h.State == HalfOpen {
			h.State = Open
		}
		s.circuits[h.Channel.Key()] = &circuit{channel: h.Channel, state: h.State,
			failures: h.Failures, openUntilMs: h.OpenUntilMs, lastCode: h.LastCode}
	}
	return nil
}
