package main

//go:wasmexport persist
func persist() int32 { return call("persist") }
