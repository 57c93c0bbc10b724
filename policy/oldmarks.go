package policy

// Exhaustion marks used to live in their own file, quota-marks.json
// ({"marks": {provider: {markedAtMs, untilMs, liftedAtMs?}}}), told to the
// module again at every start. They now travel in the provider's health
// record (MarkedAtMs, merge.go), so health.json and the shared store carry
// them. An old file is folded into health once; the shim reads it, renames
// it so it is never read again, and audits what this answers.

// OldMark is one provider's entry of an old quota-marks.json.
type OldMark struct {
	Provider            string
	MarkedAtMs, UntilMs int64
	// Lifted: the mark was lifted at LiftedAtMs (a reading showed allowance).
	Lifted     bool
	LiftedAtMs int64
}

// FoldOldMarks merges the live, unlifted marks into health. Each becomes a
// provider record built on the module's own for that provider (so it keeps
// its counts) and one version above it (so the merge takes it, here and on
// every host it reaches). A provider already marked at least as long is
// left alone. Providers lists the records built, adopted or not.
func (s *State) FoldOldMarks(now int64, marks []OldMark) (adopted int, providers []string) {
	own := map[string]ChannelHealth{}
	for _, h := range s.Health() {
		if h.Channel.Model == "*" {
			own[h.Channel.Provider] = h
		}
	}
	var hs []ChannelHealth
	for _, m := range marks {
		if m.MarkedAtMs < 0 || m.UntilMs <= now || m.Lifted && m.LiftedAtMs >= m.MarkedAtMs {
			continue // gone, or lifted after it was set
		}
		o, known := own[m.Provider]
		long := known && o.State == Open && o.OpenUntilMs >= m.UntilMs
		if long && o.MarkedAtMs != 0 {
			continue
		}
		at := min(m.MarkedAtMs, now)
		h := ChannelHealth{Channel: Channel{m.Provider, "*"}, State: Open, Failures: o.Failures, Opens: o.Opens,
			OpenUntilMs: m.UntilMs, LastCode: o.LastCode, ChangedAtMs: at, Version: o.Version + 1, MarkedAtMs: at}
		if long {
			h.OpenUntilMs, h.ChangedAtMs = o.OpenUntilMs, o.ChangedAtMs
		}
		if ValidHealth(len(hs), h) != nil {
			continue // a name no health record may carry
		}
		hs = append(hs, h)
		providers = append(providers, m.Provider)
	}
	adopted, _ = s.Merge(now, hs) // every record in hs is valid
	return adopted, providers
}
