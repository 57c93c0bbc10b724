package main

// balanceOutput reads a balance script's stdout into a reading
// (plugin/codec/balance.go). Pure: the shim calls it on the running instance.
//
//go:wasmexport balance-output
func balanceOutput() int32 { return call("balance-output") }
