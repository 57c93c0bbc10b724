package policy

import "fmt"

// A forced reasoning-effort strip. Some routes accept the effort field their
// model lists and still answer worse (or bill more) with it; dsh-model-failover
// users stripped it on every failover. stripReasoningEffort names the targets
// that never get it from a failover, whatever the host says their model lists.

// stripsEffort reports whether a failover to target must drop the effort.
func (s *State) stripsEffort(target Channel) bool {
	for _, t := range s.cfg.StripReasoningEffort {
		if t.Provider == target.Provider && (t.Model == providerModel || t.Model == target.Model) {
			return true
		}
	}
	return false
}

func validateStrip(targets []Channel) error {
	for i, t := range targets {
		if t.Provider == "" || t.Model == "" {
			return &FieldError{fmt.Sprintf("stripReasoningEffort[%d]", i), `needs a provider and a model ("*" for every model of the provider)`}
		}
		for j := 0; j < i; j++ {
			if targets[j] == t {
				return &FieldError{fmt.Sprintf("stripReasoningEffort[%d]", i), fmt.Sprintf("duplicates stripReasoningEffort[%d] (%s)", j, t)}
			}
		}
	}
	return nil
}
