package main

//go:wasmexport preferences
func preferences() int32 { return call("preferences") }
