// Package migrate turns the rows of the five plugins dsh-resilience replaces
// (dsh-daruma, dsh-reconnect, dsh-llm-quota-retry, dsh-plugin-tool-retry,
// dsh-model-failover) and our own row into one `resilience` row, with a table
// that lists every old key and what it became.
//
// It is a pure function of the rows: the shim reads the YAML (with the host's
// own parser), sends the rows through the module's `migrate` export
// (plugin/codec/migrate.go) and prints the answer. It lives in Go, not in the
// shim, so that a row's keys are plain strings: a key named `__proto__` or
// `constructor` is one more unknown key, never a path into a JS prototype.
//
// Every key of an old row ends up in the table: mapped (old key -> our key
// and value), or without an equivalent (and what the user gets instead). Two
// keys that set one of our keys to different values are refused, both named:
// a migration that picked one silently would change behaviour nobody chose.
// Only what a row says is carried over; the old plugins' defaults are not
// restated (docs/migrating lists them).
package migrate
