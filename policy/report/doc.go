// Package report turns audit logs (the JSON lines host-shim/audit.js writes)
// into the report `/resilience report`, the web's Report view and
// `make report` show: incidents, availability, time to first token,
// give-ups, and what the stock host would have done.
//
// It is pure, like the policy: it reads no file and no clock (the window comes
// in as input), so the same lines always give the same report, natively and
// in the wasm module, and the shim keeps only reading files and laying the
// numbers out.
//
// A report is read, not loaded: lines come in batches (Feed) and are folded
// into aggregates as they arrive, so a log of any size reports in bounded
// memory (limits.go names every bound). A line it cannot use is skipped and
// counted, never fatal: a log cut by a crash, or written by another version,
// must still report.
//
// Several hosts' logs are merged by time inside the package (merge.go), not
// by the caller: the merge needs each record's time, and reading times is
// reading records, which is this package's job and no one else's.
package report
