package report

// incident is one outage of one channel, while it is being read.
type incident struct {
	channel                                 string
	start, end                              int64
	ended                                   bool
	startKnown                              bool // its opening is in the logs, not only an adoption
	cause, class                            string
	hung                                    bool // a stream on it was cut for silence
	failovers, failedRequests, failedProbes int
	lostMs                                  int64
	codes                                   []string // the failure codes met, first first
	// sessions: every session it touched (failed on it, left it, or routed
	// round it). met: each one's first contact (a failure or a request the
	// breaker routed round), in order: the turns the stock host would have had
	// to carry through it.
	sessions map[string]struct{}
	met      map[string]struct{}
	metAt    []int64
	// The provider's Retry-After on the first contact that was a failure:
	// above the stock host's cap, it fails the turn at once.
	firstCoded bool
	retryAfter opt[float64]
}

// attempt is one failed request, as an incident counts it.
type attempt struct {
	agent, code string
	at          int64
	retryAfter  opt[float64]
}

func (inc *incident) addSession(agent string) {
	if inc.sessions == nil {
		inc.sessions = map[string]struct{}{}
	}
	if len(inc.sessions) < maxSessions {
		inc.sessions[agent] = struct{}{}
	}
}

// addFailure counts a failed request on the incident's channel.
func (inc *incident) addFailure(f attempt) {
	inc.failedRequests++
	inc.addCode(f.code)
	inc.meet(f)
	if f.agent != "" {
		inc.addSession(f.agent)
	}
}

func (inc *incident) addCode(code string) {
	for _, c := range inc.codes {
		if c == code {
			return
		}
	}
	if len(inc.codes) < maxCodes {
		inc.codes = append(inc.codes, code)
	}
}

// meet notes a session's first contact with the outage.
func (inc *incident) meet(f attempt) {
	if f.agent == "" {
		return
	}
	if _, ok := inc.met[f.agent]; ok || len(inc.metAt) >= maxSessions {
		return
	}
	if inc.met == nil {
		inc.met = map[string]struct{}{}
	}
	inc.met[f.agent] = struct{}{}
	inc.metAt = append(inc.metAt, f.at)
	if !inc.firstCoded && f.code != "" {
		inc.firstCoded, inc.retryAfter = true, f.retryAfter
	}
}

// failures are a channel's failed attempts since its last success, before any
// breaker opened: what an incident, once it opens, counts as its onset.
// Folded as they come: their count, their codes, and each session's first.
type failures struct {
	n      int
	codes  []string
	firsts []attempt // each session's first, in order ("" included: no session)
	seen   map[string]struct{}
}

func (p *failures) add(f attempt) {
	p.n++
	found := false
	for _, c := range p.codes {
		found = found || c == f.code
	}
	if !found && len(p.codes) < maxCodes {
		p.codes = append(p.codes, f.code)
	}
	if _, ok := p.seen[f.agent]; !ok && len(p.firsts) < maxSessions {
		p.seen[f.agent] = struct{}{}
		p.firsts = append(p.firsts, f)
	}
}

// onset counts a channel's failures before its breaker opened into the
// incident it opened, and into the troubles of the sessions they hit.
func (a *Accumulator) onset(inc *incident, p *failures) {
	inc.failedRequests += p.n
	for _, c := range p.codes {
		inc.addCode(c)
	}
	for _, f := range p.firsts {
		inc.meet(f)
		if f.agent != "" {
			inc.addSession(f.agent)
		}
		if ag := a.agents[f.agent]; ag != nil && ag.trouble != nil {
			ag.trouble.add(inc)
		}
	}
}

// pendingFor is a channel's failures before an outage, begun when needed.
func (a *Accumulator) pendingFor(key string) *failures {
	p := a.pending[key]
	if p == nil {
		p = &failures{seen: map[string]struct{}{}}
		a.pending[key] = p
	}
	return p
}
