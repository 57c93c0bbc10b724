package main

//go:wasmexport quota-projection
func quotaProjection() int32 { return call("quota-projection") }
