package main

//go:wasmexport view
func view() int32 { return call("view") }
