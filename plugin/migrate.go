package main

// migrate maps the rows of the plugins dsh-resilience replaces to one row
// (plugin/codec/migrate.go). The shim calls it on a short-lived instance of
// its own, never on the policy's.
//
//go:wasmexport migrate
func migrate() int32 { return call("migrate") }
