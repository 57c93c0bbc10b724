package policy

import (
	"fmt"
	"slices"
	"strings"
)

// State is everything the policy remembers. The caller owns it and passes it to
// every Step; only channel health is worth persisting (Health/Merge).
//
// Nothing in a decision scans the whole state: channels and providers are
// found by map (keyed by the Channel itself, no text built per lookup), the
// next wake is the top of a heap (wake.go), agents live in an O(1) table
// (agents.go), and a provider's check walks only its own channels.
type State struct {
	cfg       Config
	circuits  map[Channel]*circuit
	providers map[string]*provider
	agents    agentTable
	models    map[Channel]ModelInfo
	backup    Channel
	wakes     wakeIndex
	wakeAt    int64               // the last ScheduleWake sent
	q         quotaState          // readings, refreshes and marks (balance.go)
	names     map[Channel]Channel // interned channels (intern)
	// unservableMarks counts the models entries that mark a channel the host
	// cannot serve (servable.go); at 0, servable needs no lookup.
	unservableMarks int

	// The chain, indexed once at configure (chainindex.go), so walking it
	// hashes nothing and touches one slice.
	chainIdx map[Channel]int
	chain    chainIndex

	due []*circuit // onWake's scratch, reused

	held []*agent // agents whose turn a wait holds (hold.go)

	// slowCount counts the channels the slow-call breaker holds slow
	// (slow.go); at 0, routing asks nothing about slowness.
	slowCount int
	// refused is the smallest context each channel refused with
	// CONTEXT_WINDOW_EXCEEDED, until the host declares another window;
	// skipped the targets the current step's walks found too small (fit.go).
	refused map[Channel]int64
	skipped []Channel
	// ttft: recent times to first token per channel, for hedge.afterPercentile
	// (hedge.go); local, never in the snapshot, as slowness.
	ttft map[Channel]*ttftRing
	// notified: when each notice last went (notify.go); made at the first.
	notified map[Notice]int64
	// shared: what the shared store is known to hold (shared.go).
	shared map[Channel]ChannelHealth
}

// provider is what the policy keeps per provider: its breaker (whose kids are
// its channels' breakers) and its retry budget.
type provider struct {
	breaker circuit
	budget  budget
	merged  bool // Merge's mark: touched by the batch being merged
	taken   bool // Merge's mark: the batch held its own record, adopted
}

// NewState returns an empty state under a validated config.
func NewState(cfg Config) (*State, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// Sized for the chain up front: growing the maps and the wake index while
	// the first failures come in put rehashing into the slowest decisions
	// (make bench: the 10^4 x 100 scale case), and a host never has fewer
	// channels than its chain.
	s := &State{cfg: cfg, circuits: make(map[Channel]*circuit, len(cfg.Chain)), providers: make(map[string]*provider, len(cfg.Chain)),
		agents: newAgentTable(), models: make(map[Channel]ModelInfo, len(cfg.Chain)), names: make(map[Channel]Channel, len(cfg.Chain)),
		q: newQuotaState(), wakes: make(wakeIndex, 0, 2*len(cfg.Chain)), refused: map[Channel]int64{}}
	s.chainIdx = make(map[Channel]int, len(cfg.Chain))
	s.chain = newChainIndex(len(cfg.Chain))
	if len(cfg.Chain) > 0 {
		s.cfg.Chain = make([]Channel, len(cfg.Chain)) // the caller's stays as it was
	}
	for i, ch := range cfg.Chain { // indexed once, so routing never creates nor hashes them
		p := s.provider(ch.Provider)
		// The chain's names are the ones every copy shares (intern).
		ch = Channel{Provider: p.breaker.channel.Provider, Model: strings.Clone(ch.Model)}
		s.cfg.Chain[i] = ch
		s.names[ch] = ch
		s.chainIdx[ch] = i
		s.chain.prov[i] = p
		p.breaker.chainKids = append(p.breaker.chainKids, i)
	}
	return s, nil
}

// maxInterned bounds the interned channel names: a host has a few dozen
// channels; beyond this many, names are copied instead.
const maxInterned = 4096

// intern returns one shared copy of ch's names. What an agent keeps (its home
// and routed channels) would otherwise keep alive the whole decoded input its
// names were sliced from, for every agent: most of the live heap at 10^4
// agents, and so most of the guest's collection work.
//
// Shared, the names are also compared by address: a map lookup or a
// comparison of two channels that both came from here reads no name's bytes
// (Go compares equal string pointers without reading them). The chain's
// channels are interned at the start, the breakers' keys (State.circuit) and
// every provider's channels use the provider breaker's name, so at 10^4
// agents a decision reads one copy of a channel's names, hot in the cache,
// not one of four (the chain's, its breaker's, its provider's, the agents').
func (s *State) intern(ch Channel) Channel {
	if c, ok := s.names[ch]; ok {
		return c
	}
	c := Channel{Provider: strings.Clone(ch.Provider), Model: strings.Clone(ch.Model)}
	if p := s.providers[ch.Provider]; p != nil {
		c.Provider = p.breaker.channel.Provider
	}
	if len(s.names) < maxInterned {
		s.names[c] = c
	}
	return c
}

// Config returns the config the state runs under.
func (s *State) Config() Config { return s.cfg }

func (s *State) circuit(ch Channel) *circuit {
	c := s.circuits[ch]
	if c == nil {
		p := s.provider(ch.Provider)
		ch = s.intern(ch)
		c = &circuit{channel: ch, state: Closed, parent: &p.breaker, heapAt: -1}
		if s.cfg.Probes { // without probes nothing wakes a channel: a request finds it ready
			c.wakes = &s.wakes
		}
		p.breaker.kids = append(p.breaker.kids, c)
		s.circuits[ch] = c
		if i, ok := s.chainIdx[ch]; ok {
			s.chain.circ[i] = c
			c.chain, c.chainAt = &s.chain, i
		}
	}
	return c
}

func (s *State) provider(name string) *provider {
	p := s.providers[name]
	if p == nil {
		name = strings.Clone(name)
		p = &provider{breaker: circuit{channel: Channel{Provider: name, Model: providerModel}, state: Closed, heapAt: -1}}
		p.breaker.wakes = &s.wakes
		p.breaker.chain = &s.chain
		s.providers[name] = p
	}
	return p
}

// providerBreaker is the provider's breaker, or nil when it never had one.
func (s *State) providerBreaker(name string) *circuit {
	if p := s.providers[name]; p != nil {
		return &p.breaker
	}
	return nil
}

// routable reports whether a request could go to ch now: its own breaker and
// its provider's both let it through. It changes nothing.
func (s *State) routable(now int64, ch Channel) bool {
	if c := s.circuits[ch]; c != nil {
		return c.routable(now) && c.parent.routable(now)
	}
	if p := s.providers[ch.Provider]; p != nil && !p.breaker.routable(now) {
		return false
	}
	return true
}

// routableInChain is routable for the chain's entry i, by its index.
func (s *State) routableInChain(now int64, i int) bool { return s.chain.routable(now, i) }

// reopensAtInChain is reopensAt for the chain's entry i, by its index.
func (s *State) reopensAtInChain(now int64, i int) int64 { return s.chain.reopensAt(now, i) }

// reopensAt is when ch will next be routable.
func (s *State) reopensAt(now int64, ch Channel) int64 {
	at := now
	if c := s.circuits[ch]; c != nil {
		at = max(at, c.reopensAt(now))
	}
	if p := s.providerBreaker(ch.Provider); p != nil && p.state == Open {
		at = max(at, p.openUntilMs)
	}
	return at
}

// ChannelHealth is one channel's persisted breaker.
type ChannelHealth struct {
	Channel     Channel
	State       CircuitState
	Failures    int
	Opens       int
	OpenUntilMs int64
	LastCode    string
	// ChangedAtMs is the writer's time of its last transition (or adoption),
	// on the writer's clock: with OpenUntilMs it gives the open duration the
	// writer observed, which is all a reader trusts (merge.go).
	ChangedAtMs int64
	// Version orders records of one breaker across hosts (merge.go); 0 in
	// records written before versions existed.
	Version uint64
	// MarkedAtMs, on a provider's record (model "*"), is when a quota failure
	// marked the provider exhausted; 0 when it carries no mark. The mark lasts
	// as long as the record's open time (OpenUntilMs, the provider's reset or
	// the exhausted cooldown) and LastCode is the failure that set it.
	MarkedAtMs int64
	// LastFailureMs is the writer's time of the last failure counted in the
	// burst (Failures): a closed channel's burst is kept across processes, so
	// short runs one after another against a dead primary (a headless job
	// each, each spilling after spillAfter failures) add up to
	// failureThreshold within the burst window instead of starting from 0 in
	// every process and never opening. 0: none recorded (older records).
	LastFailureMs int64
}

// Health lists every channel breaker and every provider breaker (model "*",
// providerhealth.go), sorted by channel. A half-open channel is
// recorded as open and due, so a restarted host probes it again rather than
// trusting a probe it lost.
func (s *State) Health() []ChannelHealth {
	out := make([]ChannelHealth, 0, len(s.circuits))
	for _, c := range s.circuits {
		out = append(out, c.record(c.recordedState()))
	}
	out = append(out, s.providerHealth()...) // providerhealth.go
	slices.SortFunc(out, func(a, b ChannelHealth) int { return a.Channel.compare(b.Channel) })
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

// Merge folds persisted or shared health into the state at time now: each
// record replaces the state's breaker for its channel when it wins the merge
// order (merge.go: the higher version, not the later wall clock). A bad record is
// skipped and reported, and the rest are still taken: one garbled record must
// not cost every trip the others hold. A provider breaker's own record (model
// "*") is taken as it is (providerhealth.go); a provider without one taken is
// derived again from its models, once per provider the batch touched, after
// the batch: the work is linear in the records (a check per record, each
// walking every breaker, froze a host restoring 20 000 records).
//
// Merge is the restore of a file at start: records dated at their hand-over
// (merge.go, localOpenUntil). MergeLive is news from other processes while
// this one runs: a transition it has not seen is timed from its receipt.
func (s *State) Merge(now int64, hs []ChannelHealth) (adopted int, skipped []error) {
	return s.merge(now, hs, false)
}

// MergeLive folds health another running process just wrote (a refresh of
// the shared file, a record published through Redis) into the state at now,
// its receipt: a record of a transition this state has not seen (merge.go,
// news) starts its open time now (merge.go, "Time").
func (s *State) MergeLive(now int64, hs []ChannelHealth) (adopted int, skipped []error) {
	return s.merge(now, hs, true)
}

func (s *State) merge(now int64, hs []ChannelHealth, live bool) (adopted int, skipped []error) {
	var touched, taken []*provider
	for i, h := range hs {
		if isProviderRecord(h) && ValidHealth(i, h) == nil && s.mergeProvider(now, h, live) {
			p := s.providers[h.Channel.Provider]
			p.taken = true // not derived again
			taken = append(taken, p)
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
		c := s.circuits[h.Channel]
		if c != nil && !s.takesOver(h, c.record(c.recordedState()), now) {
			continue
		}
		fresh := live && (c == nil || news(h, c.record(c.recordedState())))
		c = s.circuit(h.Channel)
		c.adopt(h, now, s.cfg.MaxClockSkewMs, fresh)
		if p := s.providers[h.Channel.Provider]; !p.merged {
			p.merged = true
			touched = append(touched, p)
		}
		adopted++
	}
	var fx []Effect // merged records are the other host's news, not transitions of ours
	for _, p := range touched {
		p.merged = false
		if !p.taken {
			s.checkProvider(now, p, &fx)
		}
	}
	for _, p := range taken {
		p.taken = false
	}
	return adopted, skipped
}
