package policy

import (
	"fmt"
	"sort"
)

// maxAgents bounds the per-agent table. Agents are normally forgotten on
// Disposed; the bound keeps a host that never says so from growing it forever.
const maxAgents = 4096

// State is everything the policy remembers. The caller owns it and passes it to
// every Step; only channel health is worth persisting (Health/Merge).
type State struct {
	cfg       Config
	circuits  map[string]*circuit // by Channel.Key()
	providers map[string]*circuit // by provider
	agents    map[string]*agent
	models    map[string]ModelInfo // by Channel.Key()
	budgets   map[string]*budget   // by provider
	backup    Channel
	wakeAt    int64      // the last ScheduleWake sent
	q         quotaState // readings, refreshes and marks (balance.go)
}

// agent is what the policy needs to know of one agent between events.
type agent struct {
	home      Channel // where the agent belongs: what it was on before any failover
	routed    Channel // the channel its latest request went to
	sentAtMs  int64   // when that request was routed
	inFlight  bool    // that request has not failed (yet)
	failovers int     // failovers since its last success
	attempts  int     // same-channel retries and waits since its last success or failover
	// recoveringSince is the time of the first failure since the agent's last
	// success; 0 when it is not recovering.
	recoveringSince int64
	seen            int64      // last event time, for eviction
	q               agentQuota // per-session quota settings and long-term wait (quota.go)
	// counted: the before-host question counted the latest failure (burst.go).
	counted bool
	// origin is the failure that made the agent leave home, kept until its
	// next success or give-up: what the host gets back when no target is left.
	origin    Failure
	hasOrigin bool
}

// forgetRecovery ends a recovery: after a success, or once the failure went back to the host.
func (a *agent) forgetRecovery() {
	a.failovers, a.attempts, a.recoveringSince = 0, 0, 0
	a.origin, a.hasOrigin = Failure{}, false
}

// NewState returns an empty state under a validated config.
func NewState(cfg Config) (*State, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &State{cfg: cfg, circuits: map[string]*circuit{}, providers: map[string]*circuit{},
		agents: map[string]*agent{}, models: map[string]ModelInfo{}, budgets: map[string]*budget{}, q: newQuotaState()}, nil
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

func (s *State) provider(name string) *circuit {
	c := s.providers[name]
	if c == nil {
		c = &circuit{channel: Channel{Provider: name, Model: providerModel}, state: Closed}
		s.providers[name] = c
	}
	return c
}

// routable reports whether a request could go to ch now: its own breaker and
// its provider's both let it through. It changes nothing.
func (s *State) routable(now int64, ch Channel) bool {
	if c := s.circuits[ch.Key()]; c != nil && !c.routable(now) {
		return false
	}
	if p := s.providers[ch.Provider]; p != nil && !p.routable(now) {
		return false
	}
	return true
}

// reopensAt is when ch will next be routable.
func (s *State) reopensAt(now int64, ch Channel) int64 {
	at := now
	if c := s.circuits[ch.Key()]; c != nil {
		at = max(at, c.reopensAt(now))
	}
	if p := s.providers[ch.Provider]; p != nil && p.state == Open {
		at = max(at, p.openUntilMs)
	}
	return at
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
	Opens       int
	OpenUntilMs int64
	LastCode    string
	ChangedAtMs int64
}

// Health lists every channel breaker and every provider breaker (model "*",
// providerhealth.go), sorted by key. A half-open channel is
// recorded as open and due, so a restarted host probes it again rather than
// trusting a probe it lost.
func (s *State) Health() []ChannelHealth {
	out := make([]ChannelHealth, 0, len(s.circuits))
	for _, c := range s.circuits {
		st := c.state
		if st == HalfOpen {
			st = Open
		}
		out = append(out, ChannelHealth{c.channel, st, c.failures, c.opens, c.openUntilMs, c.lastCode, c.changedAtMs})
	}
	out = append(out, s.providerHealth()...) // providerhealth.go
	sort.Slice(out, func(i, j int) bool { return out[i].Channel.Key() < out[j].Channel.Key() })
	return out
}

// Bounds of one health record's fields. Health comes from files and from
// other hosts: a record beyond them is skipped, not adopted, so one oversized
// or garbled record costs neither memory nor the rest of the batch.
const (
	MaxHealthNameLen = 256 // a provider or model name
	MaxHealthCodeLen = 128 // a failure code
)

// ValidHealth checks one record (the i-th of its batch); the error names its
// field. Merge applies it; the codec applies it first to report by index.
func ValidHealth(i int, h ChannelHealth) error {
	switch {
	case h.Channel.Provider == "" || h.Channel.Model == "":
		return &FieldError{fmt.Sprintf("channels[%d].channel", i), "needs provider and model"}
	case len(h.Channel.Provider) > MaxHealthNameLen || len(h.Channel.Model) > MaxHealthNameLen:
		return &FieldError{fmt.Sprintf("channels[%d].channel", i), fmt.Sprintf("provider and model are at most %d bytes", MaxHealthNameLen)}
	case len(h.LastCode) > MaxHealthCodeLen:
		return &FieldError{fmt.Sprintf("channels[%d].lastCode", i), fmt.Sprintf("is at most %d bytes", MaxHealthCodeLen)}
	}
	switch h.State {
	case Closed, Open, HalfOpen:
		return nil
	}
	return &FieldError{fmt.Sprintf("channels[%d].state", i), fmt.Sprintf("unknown circuit state %q", h.State)}
}

// Merge folds persisted or shared health into the state: each record replaces
// the state's breaker for its channel when it changed later (another host
// process tripped or recovered it since). A bad record is skipped and
// reported, and the rest are still taken: one garbled record must not cost
// every trip the others hold. A provider breaker's own record (model "*") is
// taken as it is; a provider without one taken is derived again from its
// models (providerhealth.go).
func (s *State) Merge(now int64, hs []ChannelHealth) (adopted int, skipped []error) {
	var fx []Effect            // merged records are the other host's news, not transitions of ours
	taken := map[string]bool{} // providers whose record was adopted: not derived again
	for i, h := range hs {
		if isProviderRecord(h) && ValidHealth(i, h) == nil && s.mergeProvider(h) {
			taken[h.Channel.Provider] = true
			adopted++
		}
	}
	for i, h := range hs {
		if err := ValidHealth(i, h); err != nil {
			skipped = append(skipped, err)
			continue
		}
		if isProviderRecord(h) {
			continue
		}
		if c := s.circuits[h.Channel.Key()]; c != nil && c.changedAtMs >= h.ChangedAtMs {
			continue
		}
		st := h.State
		if st == HalfOpen {
			st = Open
		}
		s.circuits[h.Channel.Key()] = &circuit{channel: h.Channel, state: st, failures: h.Failures, opens: h.Opens,
			openUntilMs: h.OpenUntilMs, lastCode: h.LastCode, changedAtMs: h.ChangedAtMs, lastFailureMs: h.ChangedAtMs}
		if !taken[h.Channel.Provider] {
			s.checkProvider(now, h.Channel.Provider, &fx)
		}
		adopted++
	}
	return adopted, skipped
}
