package main

// Credentials out of provider text (plugin/codec/redact.go): the shim hands
// the values over, and asks about the texts it writes itself.

//go:wasmexport secrets
func secrets() int32 { return call("secrets") }

//go:wasmexport redact
func redactExport() int32 { return call("redact") }
