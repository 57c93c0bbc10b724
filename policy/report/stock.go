package report

import (
	"fmt"
	"slices"
)

// What the stock host would have done: the host's retry plugin with no route
// setting its policy (dsh-llm's defaults, read in the installed host:
// DEFAULT_MAX_RETRIES 5, 500 ms doubling to a 10 s cap, jitter 10 %, and its
// retryable codes). An over-cap Retry-After is not waited out: the stock host
// hands the failure back at once.
const (
	stockMaxRetries     = 5
	stockInitialDelayMs = 500
	stockMaxDelayMs     = 10_000
	// stockStreamIdleMs is the adapters' default stream idle timeout: how long
	// the stock host waits on a hung call, on every attempt.
	stockStreamIdleMs = 300_000
)

var stockRetryable = []string{"EMPTY_RESPONSE", "RATE_LIMIT", "SERVER", "TIMEOUT", "TRANSPORT"}

// stockBackoffMs is the stock host's whole backoff over its budget (jitter
// averages out): 0.5 + 1 + 2 + 4 + 8 s.
func stockBackoffMs() int64 {
	var sum int64
	for i := range stockMaxRetries {
		sum += min(int64(stockInitialDelayMs)<<i, stockMaxDelayMs)
	}
	return sum
}

// stockOutcome is what the stock host does with one failure of this code:
// retries more requests over budgetMs, then the turn fails (retries 0: at
// once). hung: each attempt hangs until the idle timeout.
func stockOutcome(code string, hung bool, retryAfter opt[float64]) Stock {
	if !slices.Contains(stockRetryable, code) {
		return Stock{Code: code, Why: ptr(some(fmt.Sprintf("%s is not retried", code)))}
	}
	if retryAfter.ok && retryAfter.v > stockMaxDelayMs {
		return Stock{Code: code, Why: ptr(some("Retry-After above its 10 s cap"))}
	}
	s := Stock{Code: code, Retries: stockMaxRetries, BudgetMs: stockBackoffMs()}
	if hung {
		s.BudgetMs += (stockMaxRetries + 1) * stockStreamIdleMs
		s.Why = ptr(some("each attempt hangs for the 300 s idle timeout"))
	}
	return s
}
