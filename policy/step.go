package policy

import "fmt"

// Step advances the state by one event at time now (ms since the epoch) and
// returns the verdict for the host plus the effects for the shell, in order.
// The state is updated in place; the same state, time and event always give
// the same output.
func Step(s *State, now int64, ev Event) Output { return StepInto(s, now, ev, nil) }

// StepInto is Step appending the effects to buf[:0], so a caller that
// encodes each output before the next step (the wasm entry) reuses one slice
// instead of growing a new one per call.
func StepInto(s *State, now int64, ev Event, buf []Effect) Output {
	fx := buf[:0]
	v := Verdict{Kind: Pass}
	s.skipped = s.skipped[:0] // what this step's walks find too small (fit.go)
	switch e := ev.(type) {
	case Request:
		v = s.onRequest(now, e, &fx)
	case AuxRequest:
		v = s.onAuxRequest(now, e)
	case RequestError:
		v = s.onRequestError(now, e, &fx)
	case Settled:
		s.onSettled(now, e, &fx)
	case Disposed:
		s.onDisposed(e, &fx)
	case Wake:
		s.onWake(now, &fx)
	case ProbeResult:
		s.onProbeResult(now, e, &fx)
	case ModelInfo:
		s.onModelInfo(now, e, &fx)
	case SetBackup:
		s.onSetBackup(e)
	case ToolResult:
		v = s.onToolResult(e, &fx)
	case StreamCheck:
		v = s.onStreamCheck(now, e, &fx)
	case HedgeResult:
		s.onHedgeResult(now, e, &fx)
	case SetQuota:
		s.onSetQuota(now, e, &fx)
	case SetPool:
		s.onSetPool(now, e, &fx)
	case BalanceReading:
		s.onBalanceReading(now, e, &fx)
	case RestoreRoute:
		s.onRestoreRoute(now, e)
	default:
		panic(fmt.Sprintf("policy: unknown event %T", ev))
	}
	if len(s.held) > 0 && mayHaveFreed(ev, fx) {
		s.cutHeld(now, &fx)
	}
	s.scheduleWake(now, &fx)
	s.refreshBalances(now, &fx)
	return Output{Verdict: v, Effects: fx}
}
