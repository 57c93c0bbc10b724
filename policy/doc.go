// Package policy decides how dsh-resilience answers failing model requests,
// failing tool calls and silent model streams.
//
// It is a pure state machine: Step(state, now, event) advances the state and
// returns a verdict for the host's waterfall plus effects for the shell to carry
// out. It never reads a clock, draws randomness, does I/O or starts goroutines:
// time and random draws arrive with each event, so the same inputs always give
// the same outputs, natively and inside the wasm module alike.
//
// It imports the standard library only (a test enforces it), so the wasm entry
// and any test host can wrap it without dragging a codec into the decisions.
package policy
