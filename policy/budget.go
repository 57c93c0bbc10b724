package policy

// The retry budget bounds the plugin's own retries per provider across every
// agent: in the last budgetWindowMs, retries may add at most
// RetryBudgetPercent of the requests sent to the provider, plus
// RetryBudgetFloor. It counts in budgetSlots slots so the window slides
// without keeping every timestamp.
const (
	budgetWindowMs = 60_000
	budgetSlots    = 6
	budgetSlotMs   = budgetWindowMs / budgetSlots
)

type budget struct {
	slot     int64 // the slot index (time / budgetSlotMs) of the newest counts
	requests [budgetSlots]int
	retries  [budgetSlots]int
	hedges   [budgetSlots]int // hedge.go
}

// advance drops the counts of slots that have left the window.
func (b *budget) advance(now int64) {
	slot := now / budgetSlotMs
	if slot <= b.slot {
		return
	}
	for i := b.slot + 1; i <= slot && i <= b.slot+budgetSlots; i++ {
		b.requests[i%budgetSlots], b.retries[i%budgetSlots], b.hedges[i%budgetSlots] = 0, 0, 0
	}
	b.slot = slot
}

func (b *budget) sum() (requests, retries int) {
	for i := range budgetSlots {
		requests += b.requests[i]
		retries += b.retries[i]
	}
	return
}

func (b *budget) request(now int64) {
	b.advance(now)
	b.requests[b.slot%budgetSlots]++
}

// spend takes one retry from the budget if there is one left.
func (b *budget) spend(now int64, cfg *Config) bool {
	b.advance(now)
	req, ret := b.sum()
	if ret >= cfg.RetryBudgetFloor+req*cfg.RetryBudgetPercent/100 {
		return false
	}
	b.retries[b.slot%budgetSlots]++
	return true
}
