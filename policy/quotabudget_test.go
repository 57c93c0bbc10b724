package policy

import "testing"

// A quota failure's move within the session's pool is no failover against
// maxFailovers: the exhaustion mark bounds it (the provider left is not
// usable again until its mark lapses), and with nothing usable the turn
// waits without a limit (docs/quota.md). Its FailedOver carries Failovers 0,
// and a failover of another class around it is numbered and bounded as
// ever, in either order. Sim seed 52 (120 agents, 24 h, 8h21m48s): a-55's
// MODEL_NOT_FOUND failover then an HTTP 402 pool move, maxFailovers 1; the
// checker counted the move and called it over budget.
func TestQuotaMoveIsNotCountedAgainstMaxFailovers(t *testing.T) {
	rD := Route{Channel: Channel{"pd", "m1"}}
	type step struct {
		on, code  string // the provider the request fails on, and how
		verdict   VerdictKind
		failovers int          // the FailedOver's number (Retry only)
		reason    GiveUpReason // the give-up's reason (Delegate only)
	}
	for _, tc := range []struct {
		name  string
		max   int
		steps []step
	}{
		{"a failover, then a quota move", 1, []step{
			{"pa", "MODEL_NOT_FOUND", Retry, 1, ""},
			{"pb", "HTTP_402", Retry, 0, ""},
		}},
		{"a quota move, then a failover", 1, []step{
			{"pa", "HTTP_402", Retry, 0, ""},
			{"pb", "MODEL_NOT_FOUND", Retry, 1, ""},
		}},
		{"quota moves only, past the budget", 1, []step{
			{"pa", "HTTP_402", Retry, 0, ""},
			{"pb", "HTTP_402", Retry, 0, ""},
			{"pc", "HTTP_402", Retry, 0, ""},
		}},
		{"the budget still ends a failover after a quota move", 1, []step{
			{"pa", "MODEL_NOT_FOUND", Retry, 1, ""},
			{"pb", "HTTP_402", Retry, 0, ""},
			{"pc", "MODEL_NOT_FOUND", Delegate, 0, BudgetExhausted},
		}},
		{"a larger budget numbers the failovers around the move", 2, []step{
			{"pa", "MODEL_NOT_FOUND", Retry, 1, ""},
			{"pb", "HTTP_402", Retry, 0, ""},
			{"pc", "MODEL_NOT_FOUND", Retry, 2, ""},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := quotaSim(t, func(c *Config) {
				c.MaxFailovers = tc.max
				c.Pools[0].Routes = []Route{rA, rB, rC, rD}
			})
			proposed := rA.Channel
			for i, st := range tc.steps {
				on := routeOf(m.request("s1", proposed), proposed)
				if on.Provider != st.on {
					t.Fatalf("step %d: request went to %s, want provider %s", i, on, st.on)
				}
				out := m.quotaFail("s1", st.on, st.code, "")
				if out.Verdict.Kind != st.verdict {
					t.Fatalf("step %d (%s on %s): verdict %+v, want %s", i, st.code, st.on, out.Verdict, st.verdict)
				}
				if st.verdict == Delegate {
					if g := effectsOf[GaveUp](out); len(g) != 1 || g[0].Reason != st.reason {
						t.Fatalf("step %d: gave up %+v, want %s", i, g, st.reason)
					}
					continue
				}
				fo := effectsOf[FailedOver](out)
				if len(fo) != 1 || fo[0].Failovers != st.failovers {
					t.Fatalf("step %d (%s on %s): failed over %+v, want numbered %d", i, st.code, st.on, fo, st.failovers)
				}
				proposed = fo[0].From // the host proposes the route its log last used
			}
		})
	}
}

// A chain session (in no pool) under the quota rules that spent its failover
// budget waits for the allowance on a quota failure, as it does when nothing
// else is routable; before, a routable chain target made it give up.
func TestQuotaFailureAfterTheBudgetWaitsOnTheChain(t *testing.T) {
	for _, max := range []int{1, 2} {
		m := quotaSim(t, func(c *Config) {
			c.Pools = nil
			c.Chain = []Channel{rA.Channel, rB.Channel, rC.Channel}
			c.MaxFailovers = max
		})
		proposed := rA.Channel
		for i := range max {
			on := routeOf(m.request("s1", proposed), proposed)
			out := m.quotaFail("s1", on.Provider, "MODEL_NOT_FOUND", "")
			if fo := effectsOf[FailedOver](out); out.Verdict.Kind != Retry || len(fo) != 1 {
				t.Fatalf("max %d, failover %d: %+v", max, i+1, out)
			}
			proposed = on
		}
		on := routeOf(m.request("s1", proposed), proposed)
		out := m.quotaFail("s1", on.Provider, "HTTP_402", "")
		if g := effectsOf[GaveUp](out); len(g) != 0 {
			t.Fatalf("max %d: gave up %+v with the quota rules on", max, g)
		}
		if w := effectsOf[QuotaWait](out); out.Verdict.Kind != Wait || !out.Verdict.Held || len(w) != 1 || w[0].Phase != WaitEntered {
			t.Fatalf("max %d: %+v, want the long-term wait entered", max, out)
		}
	}
}
