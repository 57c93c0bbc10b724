package sim

import (
	"fmt"
	"math/rand"
)

// The quota switch in the pool worlds (issue #35). A pool world mixes a
// quota pool with the chain; some of its users turn their session's quota
// switch off, on, or back to the default, as /quota-retry does. The seed's
// promise is the invariant: the switch "covers the route move as much as
// the wait", so a session whose switch is off is never moved within its
// pool for a spent allowance (quota-routed for a failure, or for a provider
// marked meanwhile) and never held in a long-term wait. A move because its
// context outgrew a route, or a pool chosen by command, is not the
// allowance response and stays allowed.

// switchOps draws quota switch changes for a pool world, about two an hour,
// from a stream of their own so every other draw of a seed stays as it was.
func switchOps(seed int64, s *Schedule, w routeWorld, agents int, add func(Op)) {
	if len(w.pools) == 0 {
		return
	}
	r := rand.New(rand.NewSource(seed ^ 0x35_35_35))
	for t := int64(0); t < s.EndMs; {
		t += int64(r.ExpFloat64() * 3600_000 / 2)
		if t >= s.EndMs {
			break
		}
		i := r.Intn(agents)
		add(Op{At: t, Kind: OpQuotaSwitch, Agent: fmt.Sprintf("%s-%d", agentPool[i%len(agentPool)], i), N: []int{1, 1, 0, 2}[r.Intn(4)]})
	}
}

var switchModes = [...]string{"on", "off", "default"}

// quotaSwitch is the user setting the agent's switch: the shim keeps it and
// tells the running instance at once.
func (r *runner) quotaSwitch(op *Op) {
	a := r.agent(op.Agent)
	a.quotaSwitch = switchModes[op.N%len(switchModes)]
	if a.quotaSwitch == "default" {
		a.quotaSwitch = ""
	}
	a.switchTold = false
	// The command tracks the session first (quota-commands.js
	// sessionCommand): a new instance hears its saved home and pick before
	// the switch. Told the switch alone, it met the session as new, and a
	// rebuild's telling then moved the chip (sim seed 91 at 24 h, 120 agents).
	r.restoreRoute(a)
	r.sendSwitch(a, switchModes[op.N%len(switchModes)])
}

// tellSwitch hands the agent's switch to an instance that does not know it
// (after a restart, a rebuild), before its request, as the shim's first sight does.
func (r *runner) tellSwitch(a *simAgent) {
	if a.quotaSwitch != "" && !a.switchTold {
		r.sendSwitch(a, a.quotaSwitch)
	}
}

func (r *runner) sendSwitch(a *simAgent, mode string) {
	if _, ok := r.decide("set-quota", Channel{}, nil, func(b []byte) []byte {
		b = append(b, `{"kind":"set-quota","agent":`...)
		b = appendStr(b, a.id)
		b = append(b, `,"mode":`...)
		b = appendStr(b, mode)
		return append(b, '}')
	}); ok {
		a.switchTold = true
	}
}

// checkSwitch holds a step's effects against the switch of each agent they name.
func (r *runner) checkSwitch(out Output) {
	for _, fx := range out.Effects {
		if fx.Kind != "quota-routed" && fx.Kind != "quota-wait" {
			continue
		}
		a := r.agents[fx.Agent]
		if a == nil || a.quotaSwitch != "off" || !a.switchTold {
			continue
		}
		switch {
		case fx.Kind == "quota-routed" && fx.Reason != "assigned" && fx.Reason != "outgrown":
			r.brk("quota-switch-covers-move", "agent %q, its quota switch off, was moved within its pool (cause %s)", a.id, fx.Reason)
		case fx.Kind == "quota-wait" && fx.Reason != "left":
			r.brk("quota-switch-covers-move", "agent %q, its quota switch off, was held in a long-term wait (%s)", a.id, fx.Reason)
		}
	}
}
