package testhost

import (
	"fmt"
	"testing"
)

// fxSessionRoute is the shell's persistence news of a session: its home and
// the user's pick (zero channels are absent).
func fxSessionRoute(agent string, home, pick ch) string {
	s := fmt.Sprintf(`{"kind":"session-route","agent":%s`, js(agent))
	if home != (ch{}) {
		s += `,"home":` + home.json()
	}
	if pick != (ch{}) {
		s += `,"pick":` + pick.json()
	}
	return s + "}"
}

func restoreRoute(now int64, agent string, home ch) string {
	return fmt.Sprintf(`{"nowMs":%d,"event":{"kind":"restore-route","agent":%s,"home":%s}}`, now, js(agent), home.json())
}

// A session's home and pick through the real module: what the shell keeps,
// and a restarted instance sending the session on its failover route home.
func TestSessionScenarios(t *testing.T) {
	runScenarios(t, []scenario{
		{name: "a new session whose home is open starts away: its home reaches the shell once; a pick is reported", steps: engSteps(
			engOne(engConfigure([]ch{chA, chB, chC}, classic...)),
			engOpenA(1000, 60000, chB, 0),
			engOne(
				decide(request(1100, "a2", chA), out(vSwap(chB), fxSessionRoute("a2", chA, ch{}))),
				decide(request(1200, "a2", chA), out(vSwap(chB))),
				// The user picks C: honoured, reported as home and pick.
				decide(request(1300, "a2", chC), out(vPass, fxSessionRoute("a2", chC, chC))),
				decide(request(1400, "a2", chC), out(vPass)),
			),
		)},
		{name: "restart: a restored home sends the session on its failover route home, with a return", steps: engSteps(
			engOne(
				engConfigure([]ch{chA, chB}, classic...),
				decide(restoreRoute(5000, "a1", chA), out(vPass)),
				decide(request(5100, "a1", chB), out(vSwap(chA), fxReturned("a1", chB, chA))),
				decide(request(5200, "a1", chA), out(vPass)),
			),
		)},
		{name: "restart without the home: the proposed failover route is taken as home", steps: engSteps(
			engOne(
				engConfigure([]ch{chA, chB}, classic...),
				decide(request(5100, "a1", chB), out(vPass)),
			),
		)},
	})
}
