package sim

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// A Schedule is one simulated run, fully determined: the world's channels,
// the policy config, and the operations that happen to it in time order.
// Everything random about a run is drawn when the schedule is generated or
// derived from an op's ID, so a schedule with ops removed (shrinking) still
// runs the same way for the ops it keeps.
type Schedule struct {
	Seed     int64
	Channels []Channel // the world's channels; ops name them by index
	Homes    []int     // channels agents are configured with (may lie outside the chain)
	Config   string    // the policy config row, JSON
	Ops      []Op
	// EndMs is the virtual duration of the run.
	EndMs int64
}

// OpKind is what an op does to the world.
type OpKind int

const (
	// OpOutage: channel Ch (or every model of provider Prov when Ch < 0)
	// fails in Mode from At for Dur.
	OpOutage OpKind = iota
	// OpTurn: Agent starts a turn of N model requests from channel Ch.
	OpTurn
	// OpCancel: the user interrupts Agent (its request or its wait).
	OpCancel
	// OpDispose: Agent is disposed (the host says so).
	OpDispose
	// OpTool: Agent calls tool N; it fails Dur times with Mode's tool error, then succeeds.
	OpTool
	// OpRestart: the host restarts: snapshot, new instance, configure, restore, backup.
	OpRestart
	// OpRebuild: the shim rebuilds the instance (after a trap) with config and health.
	OpRebuild
	// OpBackup: the user picks channel Ch as backup (Ch < 0 clears it).
	OpBackup
	// OpStream: a streaming call on Ch is checked for a stall.
	OpStream
	// OpModelInfo: the host tells channel Ch's reasoning efforts.
	OpModelInfo
	// OpPick: the user picks channel Ch as Agent's model.
	OpPick
	// OpReading: provider Prov's balance script reads N.
	OpReading
	// OpQuotaSwitch: the user sets Agent's quota switch: N 0 on, 1 off, 2 default (quotaworld.go).
	OpQuotaSwitch
)

var opNames = [...]string{"OpOutage", "OpTurn", "OpCancel", "OpDispose", "OpTool", "OpRestart", "OpRebuild", "OpBackup", "OpStream", "OpModelInfo", "OpPick", "OpReading", "OpQuotaSwitch"}

func (k OpKind) String() string { return opNames[k] }

// Mode is how a channel fails during an outage.
type Mode int

const (
	// ModeTransient: 5xx and timeouts the host's retry plugin retries.
	ModeTransient Mode = iota
	// ModeFlaky: half the requests fail transiently.
	ModeFlaky
	// ModeRateLimit: 429 with a Retry-After of RetryAfterMs (sometimes absurd).
	ModeRateLimit
	// ModeQuota: a spent allowance (402, or wording) that states its reset time.
	ModeQuota
	// ModeUnavailable: the model is gone.
	ModeUnavailable
	// ModeStall: requests are accepted and never answered; the watchdog cuts them.
	ModeStall
	// ModeProbeHang: requests fail; probes never come back.
	ModeProbeHang
	// ModeStreamClosed: the stream closes early; the host does not retry it.
	ModeStreamClosed
	numModes
)

var modeNames = [...]string{"ModeTransient", "ModeFlaky", "ModeRateLimit", "ModeQuota", "ModeUnavailable", "ModeStall", "ModeProbeHang", "ModeStreamClosed"}

func (m Mode) String() string { return modeNames[m] }

// Op is one thing that happens in a run.
type Op struct {
	ID           int // stable identity: seeds the op's own draws
	At           int64
	Kind         OpKind
	Ch           int // a channel index, or -1
	Prov         string
	Agent        string
	N            int
	Dur          int64
	Mode         Mode
	RetryAfterMs int64
}

// Options shape generated schedules.
type Options struct {
	Hours float64
	// Agents alive at once, at most.
	Agents int
	// OutagesPerHour is how often an outage starts (0: 3 an hour).
	OutagesPerHour float64
	// NoRestarts keeps one module instance for the whole run (for memory
	// measurements: a restart starts a fresh instance).
	NoRestarts bool
	// CollidingNames and AgentFlood add the inputs that expose two state bugs
	// issue #9 fixes, which break other invariants in their wake: channels
	// whose "provider/model" keys collide, and more agents than the policy's
	// agent table holds (4096).
	CollidingNames, AgentFlood bool
}

// world name pools: slashes, unicode and a long name, as real routes have.
var (
	longName     = "route-" + strings.Repeat("very-long-provider-name-", 9) + "end"
	providerPool = []string{"deepseek-official", "openrouter/eu", "代理商-α", "my-openai-route", longName, "local"}
	modelPool    = []string{"deepseek-v4-flash", "deepseek-v4-pro", "meta-llama/llama-4-maverick", "模型-β", "gpt-x", "claude/sonnet-4.5", "🙂-mini"}
	agentPool    = []string{"agent", "sub/agent", "子代理", "a"}
	toolPool     = []string{"web_fetch", "mcp_search_docs", "mcp_search_web", "shell", "write_file", "工具/查找", "fetch"}
)

// Tools a schedule's config allows to be repeated, and the tool pool's index range.
var allowList = []string{"web_fetch", "mcp_search_*", "工具/*"}

// Generate draws a schedule from a seed.
func Generate(seed int64, o Options) Schedule {
	r := rand.New(rand.NewSource(seed))
	s := Schedule{Seed: seed, EndMs: int64(o.Hours * 3600_000)}
	// Channels: 3-6 providers' worth, 2-3 models each.
	seen := map[Channel]bool{}
	for _, pi := range r.Perm(len(providerPool))[:3+r.Intn(len(providerPool)-2)] {
		for _, mi := range r.Perm(len(modelPool))[:1+r.Intn(3)] {
			c := Channel{providerPool[pi], modelPool[mi]}
			if !seen[c] {
				seen[c] = true
				s.Channels = append(s.Channels, c)
			}
		}
	}
	if o.CollidingNames {
		// "openrouter/eu" + "x" and "openrouter" + "eu/x" share the key "openrouter/eu/x".
		s.Channels = append(s.Channels, Channel{"openrouter/eu", "x"}, Channel{"openrouter", "eu/x"})
	}
	nch := len(s.Channels)
	plain := nch // the chain draws from the ordinary channels
	if o.CollidingNames {
		plain -= 2
	}
	chain := r.Perm(plain)[:min(plain, 2+r.Intn(4))]
	// Homes: mostly the primary, some other chain channels, one outside the chain.
	s.Homes = []int{chain[0], chain[0], chain[0], chain[len(chain)-1], r.Intn(nch)}
	if o.CollidingNames {
		// One in the chain, the other an agent's home: a chain holding both
		// is refused as a duplicate.
		chain = append(chain, nch-2)
		s.Homes = append(s.Homes, nch-1, nch-1)
	}
	s.Config = genConfig(r, s.Channels, chain)
	world := drawRouteWorld(seed, s.Channels, chain) // route.go: pools, readings
	if keys := world.configKeys(s.Channels); keys != "" {
		s.Config = s.Config[:len(s.Config)-1] + keys + "}"
	}

	agents := max(1, o.Agents)
	if o.AgentFlood {
		agents = max(agents, 20000) // 4096 new agents within a stalled request's 3 minutes
	}
	agentName := func(i int) string { return fmt.Sprintf("%s-%d", agentPool[i%len(agentPool)], i) }
	id := 0
	add := func(op Op) {
		op.ID = id
		id++
		s.Ops = append(s.Ops, op)
	}
	// Outages: overlapping, of every mode, on channels and whole providers.
	hours := max(o.Hours, 0.05)
	for t := int64(0); t < s.EndMs; {
		rate := o.OutagesPerHour
		if rate <= 0 {
			rate = 3
		}
		t += int64(r.ExpFloat64() * 3600_000 / rate)
		op := Op{At: t, Kind: OpOutage, Ch: r.Intn(nch), Mode: Mode(r.Intn(int(numModes))),
			Dur: int64(r.ExpFloat64() * float64(r.Intn(30)+1) * 60_000)}
		if r.Intn(6) == 0 {
			op.Prov, op.Ch = s.Channels[op.Ch].Provider, -1
		}
		switch op.Mode {
		case ModeRateLimit:
			// Absurd ones too: a provider asking for ten years, or a day and a half.
			op.RetryAfterMs = []int64{0, 1000, 20_000, 90_000, 3600_000, 0, 1000, 20_000, 36 * 3600_000, 10 * 365 * 24 * 3600_000}[r.Intn(10)]
		case ModeQuota:
			op.Dur = int64(r.Intn(6)+1) * 3600_000 // a spent allowance lasts hours
		}
		add(op)
	}
	// Agents: turns of a few requests, some cancelled, some disposed,
	// tool calls between. Each agent has its own home channel.
	for t := int64(0); t < s.EndMs; {
		t += int64(r.ExpFloat64() * 60_000 * 10 / float64(agents)) // each agent about every 10 min
		a := r.Intn(agents)
		add(Op{At: t, Kind: OpTurn, Agent: agentName(a), Ch: s.Homes[r.Intn(len(s.Homes))], N: 1 + r.Intn(12)})
		switch r.Intn(12) {
		case 0:
			add(Op{At: t + int64(r.Intn(300_000)), Kind: OpCancel, Agent: agentName(a)})
		case 1:
			add(Op{At: t + int64(r.Intn(3600_000)), Kind: OpDispose, Agent: agentName(a)})
		case 2, 3:
			add(Op{At: t + int64(r.Intn(60_000)), Kind: OpTool, Agent: agentName(a), N: r.Intn(len(toolPool)),
				Dur: int64(r.Intn(5)), Mode: Mode(r.Intn(int(numModes)))})
		case 4:
			add(Op{At: t + int64(r.Intn(60_000)), Kind: OpStream, Ch: r.Intn(nch), N: r.Intn(5), Dur: int64(r.Intn(400_000))})
		}
	}
	routeOps(seed, &s, world, agents, add)
	for i := 0; i < int(hours*2)+1; i++ {
		t := int64(r.Float64() * float64(s.EndMs))
		switch r.Intn(4) {
		case 0:
			if !o.NoRestarts {
				add(Op{At: t, Kind: OpRestart})
			}
		case 1:
			if !o.NoRestarts {
				add(Op{At: t, Kind: OpRebuild})
			}
		case 2:
			ch := -1
			if r.Intn(3) > 0 {
				ch = r.Intn(nch)
			}
			add(Op{At: t, Kind: OpBackup, Ch: ch})
		case 3:
			add(Op{At: t, Kind: OpModelInfo, Ch: r.Intn(nch), N: r.Intn(3)})
		}
	}
	s.Config = withRecoveringPrimary(seed, s.Config, s.EndMs, chain, add)
	sortOps(s.Ops)
	return s
}

// withRecoveringPrimary adds the worlds of issue #17, drawn from a stream of
// their own so every other draw of a seed stays as it was: a primary that is
// rate limited for seconds to minutes while its fallback's allowance is spent
// for hours (a stated reset), once or twice an hour; and, in one schedule in
// three, the quota rules on, so that pairing holds turns in long-term waits.
func withRecoveringPrimary(seed int64, cfg string, endMs int64, chain []int, add func(Op)) string {
	if len(chain) < 2 {
		return cfg
	}
	r := rand.New(rand.NewSource(seed ^ 0x17_17_17))
	if r.Intn(3) == 0 {
		cfg = cfg[:len(cfg)-1] + `,"quota":{}}`
	}
	for t := int64(0); t < endMs; {
		t += int64(r.ExpFloat64() * 3600_000 / 1.5)
		if t >= endMs {
			break
		}
		add(Op{At: t, Kind: OpOutage, Ch: chain[0], Mode: ModeRateLimit, Dur: int64(5_000 + r.Intn(120_000))})
		add(Op{At: t + int64(r.Intn(2000)), Kind: OpOutage, Ch: chain[1], Mode: ModeQuota, Dur: int64(r.Intn(3)+1) * 3600_000})
	}
	return cfg
}

func sortOps(ops []Op) {
	// By time, then ID: a total order, so the result never depends on the sort.
	sort.Slice(ops, func(i, j int) bool {
		return ops[i].At < ops[j].At || ops[i].At == ops[j].At && ops[i].ID < ops[j].ID
	})
}

// genConfig draws a valid policy config over the chain.
func genConfig(r *rand.Rand, chs []Channel, chain []int) string {
	var b []byte
	b = append(b, `{"chain":[`...)
	for i, c := range chain {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendChannel(b, chs[c])
	}
	b = append(b, ']')
	num := func(key string, v int64) { b = fmt.Appendf(b, `,"%s":%d`, key, v) }
	num("failureThreshold", int64(1+r.Intn(5)))
	num("burstWindowMs", int64(10_000+r.Intn(300_000)))
	cool := int64(1000 + r.Intn(120_000))
	num("cooldownMs", cool)
	num("maxCooldownMs", cool*int64(1+r.Intn(40)))
	num("providerThreshold", int64(r.Intn(3)))
	base := int64(100 + r.Intn(2000))
	num("backoffBaseMs", base)
	num("backoffMaxMs", base+int64(r.Intn(60_000)))
	num("maxFailovers", int64(1+r.Intn(6)))
	num("giveUpAfterMs", int64(60_000+r.Intn(3600_000)))
	num("retryBudgetPercent", int64(r.Intn(50)))
	num("retryBudgetFloor", int64(r.Intn(8)))
	if r.Intn(4) == 0 {
		b = append(b, `,"recovery":"stay"`...)
	}
	if r.Intn(8) == 0 {
		b = append(b, `,"probes":false`...)
	}
	b = fmt.Appendf(b, `,"tools":{"retry":["web_fetch","mcp_search_*","工具/*"],"maxAttempts":%d,"backoffMs":%d}`, 1+r.Intn(5), 1+r.Intn(1000))
	b = append(b, simNotify...) // drawn from no randomness: the seeds' worlds are as before
	b = append(b, simPrune...)
	b = append(b, '}')
	return string(b)
}

// simNotify is every drawn config's `notify` list: a pager told of
// give-ups only, and a chat told of every kind (notify.go checks each
// notification names exactly the receivers that chose its kind).
const simNotify = `,"notify":[{"url":"http://127.0.0.1:9/pager","events":["give-up"]},` +
	`{"url":"http://127.0.0.1:9/chat","events":["provider-open","give-up","quota-wait","returned"]}]`

// simPrune is every drawn config's prune horizon: two hours, so a day's
// seed restarts its host from files that forgot closed records (persist),
// and the restart checks hold such a module to the one it replaces.
const simPrune = `,"healthPruneMs":7200000`
