package main

//go:wasmexport shared-writes
func sharedWrites() int32 { return call("shared-writes") }

//go:wasmexport shared-written
func sharedWritten() int32 { return call("shared-written") }
