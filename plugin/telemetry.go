package main

//go:wasmexport telemetry
func telemetryRecord() int32 { return call("telemetry") }
